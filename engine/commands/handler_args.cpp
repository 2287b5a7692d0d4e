// Shared argument checks of the command handlers (see handler_args.h).
#include "engine/commands/handler_args.h"

#include <cctype>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "engine/commands/string_ops.h"
#include "engine/keyspace/databases.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr std::string_view kCountOutOfRange =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
constexpr std::string_view kValueOutOfRange = "ERR value is out of range";

}  // namespace

void reply_wrong_arity(CommandContext& ctx) {
  std::string text(err::kWrongArity);
  text.replace(text.find("%s"), 2, to_lower(ctx.argv[0]));
  ctx.reply.error(text);
}

bool int64_or_reply(CommandContext& ctx, std::string_view arg, int64_t& out) {
  if (parse_int64(arg, out)) return true;
  ctx.reply.error(err::kNotInteger);
  return false;
}

bool random_count_or_reply(CommandContext& ctx, int64_t& count) {
  if (!int64_or_reply(ctx, ctx.argv[2], count)) return false;
  if (count == INT64_MIN) {
    ctx.reply.error(kCountOutOfRange);
    return false;
  }
  return true;
}

bool random_with_or_reply(CommandContext& ctx, std::string_view option, int64_t count, bool& with) {
  with = false;
  if (ctx.argv.size() <= 3) return true;
  if (ctx.argv.size() > 4 || !equals_ignore_case(ctx.argv[3], option)) {
    ctx.reply.error(err::kSyntax);
    return false;
  }
  // Redis replies twice as many elements: keep that count representable.
  if (count < -INT64_MAX / 2 || count > INT64_MAX / 2) {
    ctx.reply.error(kValueOutOfRange);
    return false;
  }
  with = true;
  return true;
}

void reply_subcommand_syntax_error(CommandContext& ctx) {
  std::string name(ctx.argv[0]);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ctx.reply.error("ERR unknown subcommand or wrong number of arguments for '" +
                  std::string(ctx.argv[1].substr(0, 128)) + "'. Try " + name + " HELP.");
}

void reply_help(protocol::ReplyWriter& reply, std::span<const std::string_view> lines) {
  reply.array(lines.size());
  for (std::string_view line : lines) reply.simple(line);
}

bool int_or_reply(CommandContext& ctx, std::string_view arg, int& out, std::string_view message) {
  int64_t v = 0;
  const bool parsed = parse_int64(arg, v);
  if (parsed && v >= INT_MIN && v <= INT_MAX) {
    out = static_cast<int>(v);
    return true;
  }
  if (!message.empty()) {
    ctx.reply.error(message);
  } else {
    ctx.reply.error(parsed ? protocol::err::kIntOutOfRange : protocol::err::kNotInteger);
  }
  return false;
}

Store* database_or_reply(CommandContext& ctx, int index) {
  Databases* dbs = ctx.server != nullptr ? ctx.server->databases() : nullptr;
  if (dbs == nullptr) {
    if (index == ctx.db) return &ctx.store;
  } else if (dbs->valid(index)) {
    return &(*dbs)[index];
  }
  ctx.reply.error(protocol::err::kDbIndexOutOfRange);
  return nullptr;
}

BulkLimit bulk_limit(const CommandContext& ctx) {
  if (ctx.server == nullptr) return {};
  ServerControl* server = ctx.server;
  return [server] {
    std::vector<std::pair<std::string, std::string>> values;
    server->config_get("proto-max-bulk-len", values);
    int64_t limit = kProtoMaxBulkLen;
    if (!values.empty()) parse_int64(values.front().second, limit);
    return limit;
  };
}

}  // namespace ringkv::engine
