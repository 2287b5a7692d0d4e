// ReplyWriter: the one place that encodes replies in RESP2 or RESP3.
// Handlers write through it into a connection's output buffer; they never touch sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ringkv::protocol {

enum class RespVersion : uint8_t { kResp2 = 2, kResp3 = 3 };

// Shared constant replies (Redis's shared.*), for code that copies encoded bytes directly.
namespace reply {
inline constexpr std::string_view kOk = "+OK\r\n";
inline constexpr std::string_view kPong = "+PONG\r\n";
inline constexpr std::string_view kQueued = "+QUEUED\r\n";
inline constexpr std::string_view kZero = ":0\r\n";
inline constexpr std::string_view kOne = ":1\r\n";
inline constexpr std::string_view kCrlf = "\r\n";
inline constexpr std::string_view kNullBulkResp2 = "$-1\r\n";
inline constexpr std::string_view kNullArrayResp2 = "*-1\r\n";
inline constexpr std::string_view kNullResp3 = "_\r\n";
inline constexpr std::string_view kEmptyArray = "*0\r\n";
}  // namespace reply

// A double as Redis 7.0 prints it: "%.17g" (which reads back bit-exact), with infinities spelled
// out by Redis itself as "inf"/"-inf" ("nan" comes from %.17g). The view points into `buf` or at
// a constant.
std::string_view double_text(double d, char (&buf)[32]);

// Told of every error reply a writer writes (INFO errorstats counts them by code).
class ErrorObserver {
 public:
  virtual ~ErrorObserver() = default;
  // `msg` is the error without its '-' ("ERR syntax error").
  virtual void on_error_reply(std::string_view msg) = 0;
};

class ReplyWriter {
 public:
  explicit ReplyWriter(std::string& out, RespVersion version = RespVersion::kResp2)
      : out_(&out), version_(version) {}

  RespVersion version() const { return version_; }
  void set_version(RespVersion v) { version_ = v; }
  std::string& buffer() { return *out_; }
  // Points the writer at another output buffer.
  void set_buffer(std::string& out) { out_ = &out; }
  // Tells `observer` (null: nobody) of each error reply written from now on.
  void set_error_observer(ErrorObserver* observer) { error_observer_ = observer; }

  // "+s\r\n". `s` must not contain CR or LF.
  void simple(std::string_view s);
  void ok();
  void pong();
  void queued();
  // "-msg\r\n"; `msg` carries its code, e.g. "ERR syntax error". CR/LF in msg become spaces.
  void error(std::string_view msg);
  // ":n\r\n"
  void integer(int64_t n);
  // "$len\r\ns\r\n"
  void bulk(std::string_view s);
  // Bulk string of the decimal form of n (as Redis's addReplyBulkLongLong).
  void bulk_integer(int64_t n);
  // Null bulk: "$-1\r\n" (RESP2) or "_\r\n" (RESP3).
  void null();
  // Null array: "*-1\r\n" (RESP2) or "_\r\n" (RESP3).
  void null_array();
  // Aggregate headers; the caller then writes exactly n elements (2n for a map).
  void array(size_t n);
  void map(size_t n);   // RESP3 "%n", RESP2 "*2n"
  void set(size_t n);   // RESP3 "~n", RESP2 "*n"
  void push(size_t n);  // RESP3 ">n", RESP2 "*n"
  // Double as Redis 7.0 prints it: RESP3 ",%.17g" (inf/-inf/nan spelled out), RESP2 a bulk string.
  void double_value(double d);
  // The same text as a bulk string in both protocols (scores inside ZSCAN's string array).
  void double_bulk(double d);
  // RESP3 "#t"/"#f", RESP2 ":1"/":0".
  void boolean(bool b);
  // RESP3 verbatim string "=len\r\ntxt:...", RESP2 a bulk string.
  void verbatim(std::string_view s, std::string_view format = "txt");
  // Raw, already-encoded RESP bytes (relay of a peer's reply).
  void raw(std::string_view resp);

  // Deferred aggregate length: reserve now, fill in when the count is known.
  // Returns a token for end_deferred_*. The header is inserted at the token's position when it
  // ends, so several open deferred lengths must end in reverse order (innermost first).
  size_t begin_deferred();
  void end_deferred_array(size_t token, size_t n);
  void end_deferred_map(size_t token, size_t n);
  void end_deferred_set(size_t token, size_t n);

 private:
  void header(char type, int64_t n);
  void end_deferred(size_t token, char type, int64_t n);

  std::string* out_;
  RespVersion version_;
  ErrorObserver* error_observer_ = nullptr;
};

}  // namespace ringkv::protocol
