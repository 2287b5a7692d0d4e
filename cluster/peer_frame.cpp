// Reading and writing the prefixes and frame kinds of a relay link (peer_frame.h).
#include "cluster/peer_frame.h"

#include <charconv>
#include <limits>

#include "common/numbers.h"
#include "protocol/errors.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

constexpr size_t kAny = std::numeric_limits<size_t>::max();

// The members' own frames: how many arguments each takes after its name (the handlers check
// what they mean).
struct FrameRule {
  std::string_view name;
  PeerFrameKind kind;
  size_t min_args;
  size_t max_args;
  std::string_view malformed;
};

constexpr FrameRule kFrames[] = {
    {kRingControl, PeerFrameKind::kRingControl, 0, kAny, {}},
    {kReplFrame, PeerFrameKind::kReplication, 0, kAny, {}},
    {kWaitFrame, PeerFrameKind::kReplicaWait, 0, kAny, {}},
    {kTxnFrame, PeerFrameKind::kTransaction, 0, kAny, {}},
    {kShardSubscribers, PeerFrameKind::kShardSubscribers, 1, kAny,
     "ERR malformed RINGKV.SHARDSUB frame"},
    {kShardMessage, PeerFrameKind::kShardMessage, 2, 2, "ERR malformed RINGKV.SHARDMSG frame"},
    {kKeyspaceMessage, PeerFrameKind::kKeyspaceMessage, 0, kAny, {}},
    {kTrackFrame, PeerFrameKind::kTrack, 2, kAny, "ERR malformed RINGKV.TRACK frame"},
    {kInvalidateFrame, PeerFrameKind::kInvalidate, 1, 1, "ERR malformed RINGKV.INVALIDATE frame"},
    {kImportFrame, PeerFrameKind::kImport, 0, kAny, {}},
    {kViewFrame, PeerFrameKind::kView, 1, 1, "ERR malformed RINGKV.VIEW frame"},
};

constexpr std::string_view kEmptyFrame = "ERR empty peer frame";
constexpr std::string_view kBareDb = "ERR malformed RINGKV.DB prefix";
constexpr std::string_view kBareResp3 = "ERR malformed RINGKV.RESP3 prefix";
constexpr std::string_view kBareUser = "ERR malformed RINGKV.AS prefix";
constexpr std::string_view kBadMigrate = "ERR malformed RINGKV.MIGRATE frame";

bool named(std::string_view arg, std::string_view name) {
  return common::equals_ignore_case(arg, name);
}

// The arguments of `prefix`, in the order parse_peer_frame reads them, into `args` (returns how
// many): the one place that lists them. `digits(db)` gives the database's decimal digits as a
// view that outlives the call.
template <typename Digits>
size_t prefix_args(const PeerPrefix& prefix, std::string_view (&args)[5], Digits& digits) {
  size_t n = 0;
  if (prefix.db != 0) {
    args[n++] = "RINGKV.DB";
    args[n++] = digits(prefix.db);
  }
  if (prefix.resp3) args[n++] = "RINGKV.RESP3";
  if (!prefix.user.empty()) {
    args[n++] = "RINGKV.AS";
    args[n++] = prefix.user;
  }
  return n;
}

}  // namespace

engine::Result<PeerFrame> parse_peer_frame(std::span<const std::string_view> argv, int databases) {
  PeerFrame frame;
  if (argv.empty()) return engine::Error{kEmptyFrame};
  // Every prefix and member frame is named "RINGKV.<...>": a plain command needs no more checks.
  constexpr std::string_view kOurs = "ringkv.";
  if (argv[0].size() <= kOurs.size() || !named(argv[0].substr(0, kOurs.size()), kOurs)) {
    frame.args = argv;
    return frame;
  }
  if (named(argv[0], kDbPrefix)) {
    if (argv.size() < 3) return engine::Error{kBareDb};
    const std::optional<int64_t> n = common::parse_integer(argv[1]);
    if (!n || *n < 0 || *n >= databases) return engine::Error{protocol::err::kDbIndexOutOfRange};
    frame.db = static_cast<int>(*n);
    argv = argv.subspan(2);
  }
  if (named(argv[0], kResp3Prefix)) {
    if (argv.size() < 2) return engine::Error{kBareResp3};
    frame.resp3 = true;
    argv = argv.subspan(1);
  }
  if (named(argv[0], kUserPrefix)) {
    if (argv.size() < 3) return engine::Error{kBareUser};
    frame.user = argv[1];
    argv = argv.subspan(2);
  }
  frame.args = argv;
  // A prefixed command is a client's: what follows RESP3 or AS is never a member's own frame.
  if (frame.resp3 || !frame.user.empty()) return frame;
  if (named(argv[0], kMigrateFrame)) {
    const std::optional<int64_t> version =
        argv.size() > 2 ? common::parse_integer(argv[1]) : std::nullopt;
    if (!version || *version < 1) return engine::Error{kBadMigrate};
    frame.kind = PeerFrameKind::kMigrate;
    frame.version = static_cast<uint64_t>(*version);
    frame.args = argv.subspan(2);
    return frame;
  }
  for (const FrameRule& rule : kFrames) {
    if (!named(argv[0], rule.name)) continue;
    const size_t n = argv.size() - 1;
    if (n < rule.min_args || n > rule.max_args) return engine::Error{rule.malformed};
    frame.kind = rule.kind;
    frame.args = argv.subspan(1);
    return frame;
  }
  return frame;
}

namespace {

// A request header for `prefix`'s arguments and `more` after them, then the prefix's arguments.
void append_header_and_prefix(std::string& out, const PeerPrefix& prefix, size_t more) {
  char buffer[16];
  auto digits = [&buffer](int n) {
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, n);
    return std::string_view(buffer, static_cast<size_t>(end - buffer));
  };
  std::string_view args[5];
  const size_t n = prefix_args(prefix, args, digits);
  protocol::append_request_header(out, n + more);
  for (size_t i = 0; i < n; ++i) protocol::append_request_bulk(out, args[i]);
}

}  // namespace

void append_peer_frame(std::string& out, const PeerPrefix& prefix,
                       std::span<const std::string_view> argv) {
  append_header_and_prefix(out, prefix, argv.size());
  for (std::string_view a : argv) protocol::append_request_bulk(out, a);
}

std::string prefixed_frame(const PeerPrefix& prefix, std::string_view frame) {
  if (prefix.size() == 0) return std::string(frame);
  // "*<n>\r\n" then the arguments: the count grows by the prefix's, the arguments follow it.
  const size_t eol = frame.find("\r\n");
  const size_t n = static_cast<size_t>(common::parse_integer(frame.substr(1, eol - 1)).value_or(0));
  std::string out;
  append_header_and_prefix(out, prefix, n);
  out.append(frame.substr(eol + 2));
  return out;
}

std::vector<std::string_view> peer_prefix_args(const PeerPrefix& prefix, std::string& digits) {
  auto keep = [&digits](int n) -> std::string_view { return digits = std::to_string(n); };
  std::string_view args[5];
  const size_t n = prefix_args(prefix, args, keep);
  return {args, args + n};
}

}  // namespace ringkv::cluster
