// Argument checks and key lookups that many command handlers share, each replying Redis
// 7.0.15's exact error and returning false when the check fails (the handler then just returns).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "common/numbers.h"
#include "engine/command.h"
#include "engine/commands/string_ops.h"
#include "engine/types/object.h"

namespace ringkv::engine {

// Whether an argument is `word`, as Redis's strcasecmp on its C string.
inline bool is(std::string_view arg, std::string_view word) {
  return common::equals_ignore_case(common::c_string(arg), word);
}

// Replies "ERR wrong number of arguments for '<command>' command" (the name lowercased), for
// handlers that check an argument count the table's arity cannot express (pairs).
void reply_wrong_arity(CommandContext& ctx);

// Replies Redis's addReplySubcommandSyntaxError: "ERR unknown subcommand or wrong number of
// arguments for '<argv[1]>'. Try <ARGV[0]> HELP." (the subcommand as the client spelled it).
void reply_subcommand_syntax_error(CommandContext& ctx);

// Replies a HELP subcommand's text: an array of simple strings, one per line.
void reply_help(protocol::ReplyWriter& reply, std::span<const std::string_view> lines);

// Parses an integer argument as Redis's getLongLongFromObjectOrReply; replies kNotInteger.
bool int64_or_reply(CommandContext& ctx, std::string_view arg, int64_t& out);

// Parses an int argument as Redis's getIntFromObjectOrReply: replies `message` when set, else
// kNotInteger (not an integer) or kIntOutOfRange (outside int's range).
bool int_or_reply(CommandContext& ctx, std::string_view arg, int& out,
                  std::string_view message = {});

// The database a command names (SELECT, MOVE, COPY ... DB), already parsed; replies
// kDbIndexOutOfRange and returns null when the node has no such database.
Store* database_or_reply(CommandContext& ctx, int index);

// The proto-max-bulk-len in force, which bounds string growth (APPEND, SETRANGE) and bit
// offsets: read from the server's configuration when asked (CONFIG SET changes it at run time),
// the default without a server. Asked only past kMinProtoMaxBulkLen bytes.
BulkLimit bulk_limit(const CommandContext& ctx);

// Looks `key` up for reading as a T: nullptr when absent. Replies WRONGTYPE for another type.
template <typename T>
bool read_or_reply(CommandContext& ctx, std::string_view key, const T*& out) {
  auto found = read_object<T>(ctx.store, key);
  if (!found) {
    ctx.reply.error(found.error());
    return false;
  }
  out = *found;
  return true;
}

// Looks `key` up for writing a T (see write_object; `create` adds an empty one when absent).
// Replies WRONGTYPE and returns nullopt for another type; the guard is empty when absent.
template <typename T>
std::optional<ObjectWrite<T>> write_or_reply(CommandContext& ctx, std::string_view key,
                                             bool create) {
  auto found = write_object<T>(ctx.store, key, create);
  if (!found) {
    ctx.reply.error(found.error());
    return std::nullopt;
  }
  return std::move(found.value());
}

// The count of HRANDFIELD, SRANDMEMBER and ZRANDMEMBER (argv[2]): an integer (kNotInteger) whose
// negation is representable ("value is out of range, value must between ..." for INT64_MIN).
bool random_count_or_reply(CommandContext& ctx, int64_t& count);

// The optional argv[3] of HRANDFIELD and ZRANDMEMBER, `option` (WITHVALUES or WITHSCORES): any
// other word or more arguments is a syntax error; with it, the doubled reply length must stay
// representable ("ERR value is out of range"). Sets `with` when present.
bool random_with_or_reply(CommandContext& ctx, std::string_view option, int64_t count, bool& with);

}  // namespace ringkv::engine
