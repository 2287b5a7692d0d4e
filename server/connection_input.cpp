// A connection's input: the requests read out of its buffer, a pipelined batch read at once
// and its keys prefetched, each run in turn within the loop turn's input budget.
#include <spdlog/spdlog.h>

#include <span>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "protocol/resp_parser.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// A connection with much input runs at most this long per loop turn (checked every 64
// requests), then goes on in the next one: one peer's burst of copies, or one client's deep
// pipeline, does not hold up everyone else.
constexpr int64_t kInputBudgetUs = 2000;
// All connections together run at most Server::kTurnInputBudgetUs of input per turn: input
// that arrives once the turn has run that long waits for the next turn, where deferred
// connections go first, in order (see Server's input task). A client's PING waits for about one
// such turn, not for every busy peer link's share of it.
//
// Both budgets are checked every 64 requests, or sooner once this much input has run since the
// last check: 64 big requests (a ring change's 100 KB RESTOREs) are many milliseconds of work.
constexpr size_t kInputCheckBytes = 64 * 1024;

}  // namespace

void Connection::process_input() {
  const int64_t start = common::monotonic_us();
  // The turn's input time so far, and this call's added to it however the call ends.
  const int64_t turn_before = server_.turn_input_us();
  server_.forget_command_end();
  struct Account {
    Server& server;
    int64_t start;
    Connection& conn;
    ~Account() {
      server.turn_input_us() += common::monotonic_us() - start;
      server.forget_command_end();
      conn.ahead_.clear();  // views into rbuf_, which may move before the next call
    }
  } account{server_, start, *this};
  size_t ran = 0;
  size_t unchecked_bytes = 0;
  while (rstart_ < rend_ && !close_when_flushed_ && !closing_ && !blocked_ && !held_ &&
         !output_backlogged()) {
    if (((++ran & 63) == 0 || unchecked_bytes >= kInputCheckBytes) && [&] {
          unchecked_bytes = 0;
          const int64_t spent = common::monotonic_us() - start;
          return spent > kInputBudgetUs || turn_before + spent > Server::kTurnInputBudgetUs;
        }()) {
      defer_input();
      return;
    }
    // Each request is read with the limits of the client's state after the previous one (AUTH).
    parser_.set_unauthenticated(server_.auth_required(*this));
    std::span<const std::string_view> argv;
    protocol::ParseResult r{protocol::ParseStatus::kComplete, take_ahead(argv), {}};
    if (r.consumed == 0) {
      r = parser_.parse({rbuf_.data() + rstart_, rend_ - rstart_}, argv_);
      if (r.status == protocol::ParseStatus::kComplete) prefetch_ahead(r.consumed);
      argv = argv_;
    }
    if (r.status == protocol::ParseStatus::kIncomplete) {
      if (query_buffer_over_limit()) {
        spdlog::warn("Closing client that reached max query buffer length: {}", info_line());
        close();
      }
      return;
    }
    if (r.status == protocol::ParseStatus::kError) {
      spdlog::warn("closing client id={} addr={}: {}", id_, peer_addr_, r.error);
      reply_writer().error(r.error);
      close_when_flushed();
      return;
    }
    if (argv.empty()) {
      rstart_ += r.consumed;
      continue;
    }
    // CLIENT REPLY OFF or SKIP: the request runs, its reply goes nowhere.
    dropping_ = reply_off_ || skip_this_;
    if (dropping_) {
      discard_.clear();
      writer_.set_buffer(discard_);
    }
    const bool executed = server_.execute(*this, argv, dropping_ ? writer_ : reply_writer());
    dropping_ = false;
    if (!executed) {
      hold();  // parsed again after resume()
      return;
    }
    skip_this_ = skip_next_;
    skip_next_ = false;
    rstart_ += r.consumed;
    unchecked_bytes += r.consumed;
    if (!enforce_output_limits()) return;
    if (close_after_reply_) {
      close_when_flushed();
      return;
    }
  }
}

void Connection::prefetch_ahead(size_t parsed) {
  // Enough to cover a typical pipeline's batch; a longer one is read again once these ran.
  constexpr size_t kAhead = 16;
  ahead_.clear();
  ahead_args_.clear();
  ahead_next_ = 0;
  // A batch of huge requests should not pin its arguments' memory for the connection's life.
  constexpr size_t kKeepArgs = 1024;
  if (ahead_args_.capacity() > kKeepArgs) std::vector<std::string_view>().swap(ahead_args_);
  if (parser_.unauthenticated()) return;  // the parser applies limits the scan does not
  engine::Store::Lookahead look[kAhead];
  auto arg = [](std::span<const std::string_view> argv, size_t i) {
    return argv.size() > i ? argv[i] : std::string_view();
  };
  look[0] = {arg(argv_, 1), {arg(argv_, 2), arg(argv_, 3), arg(argv_, 4)}};
  size_t at = rstart_ + parsed;
  while (ahead_.size() + 1 < kAhead) {
    const size_t first = ahead_args_.size();
    const size_t len = protocol::scan_plain_request({rbuf_.data() + at, rend_ - at},
                                                    parser_.limits(), ahead_args_);
    if (len == 0) break;
    at += len;
    ahead_.emplace_back(len, ahead_args_.size());
    const std::span<const std::string_view> argv(ahead_args_.data() + first,
                                                 ahead_args_.size() - first);
    look[ahead_.size()] = {arg(argv, 1), {arg(argv, 2), arg(argv, 3), arg(argv, 4)}};
  }
  // A lone request gains nothing: its lookup would wait for the same memory right away.
  if (!ahead_.empty()) server_.dbs()[db_].prefetch({look, ahead_.size() + 1});
}

size_t Connection::take_ahead(std::span<const std::string_view>& argv) {
  // A request the batch cannot give is parsed, and the batch read again after it.
  if (ahead_next_ >= ahead_.size() || parser_.unauthenticated()) return 0;
  const size_t first = ahead_next_ == 0 ? 0 : ahead_[ahead_next_ - 1].second;
  const auto [len, end] = ahead_[ahead_next_++];
  argv = std::span<const std::string_view>(ahead_args_).subspan(first, end - first);
  return len;
}

}  // namespace ringkv::server
