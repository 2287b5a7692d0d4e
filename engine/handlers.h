// Command handlers: one function per table row. Each parses its arguments, calls pure
// operations on the Store and writes the reply. Grouped by file: cmd_string.cpp, cmd_keys.cpp,
// cmd_hash.cpp, cmd_connection.cpp, cmd_server.cpp.
#pragma once

#include "engine/command.h"

namespace ringkv::engine {

// Strings (cmd_string.cpp)
void cmd_get(CommandContext& ctx);
void cmd_set(CommandContext& ctx);
void cmd_setnx(CommandContext& ctx);
void cmd_setex(CommandContext& ctx);
void cmd_psetex(CommandContext& ctx);
void cmd_getset(CommandContext& ctx);
void cmd_getdel(CommandContext& ctx);
void cmd_getex(CommandContext& ctx);
void cmd_mget(CommandContext& ctx);
void cmd_mset(CommandContext& ctx);
void cmd_msetnx(CommandContext& ctx);
void cmd_append(CommandContext& ctx);
void cmd_strlen(CommandContext& ctx);
void cmd_incr(CommandContext& ctx);
void cmd_decr(CommandContext& ctx);
void cmd_incrby(CommandContext& ctx);
void cmd_decrby(CommandContext& ctx);
void cmd_incrbyfloat(CommandContext& ctx);
void cmd_getrange(CommandContext& ctx);  // also SUBSTR
void cmd_setrange(CommandContext& ctx);

// Hashes (cmd_hash.cpp)
void cmd_hset(CommandContext& ctx);
void cmd_hsetnx(CommandContext& ctx);
void cmd_hget(CommandContext& ctx);
void cmd_hmget(CommandContext& ctx);
void cmd_hmset(CommandContext& ctx);
void cmd_hdel(CommandContext& ctx);
void cmd_hlen(CommandContext& ctx);
void cmd_hstrlen(CommandContext& ctx);
void cmd_hexists(CommandContext& ctx);
void cmd_hgetall(CommandContext& ctx);
void cmd_hkeys(CommandContext& ctx);
void cmd_hvals(CommandContext& ctx);
void cmd_hincrby(CommandContext& ctx);
void cmd_hincrbyfloat(CommandContext& ctx);
void cmd_hrandfield(CommandContext& ctx);
void cmd_hscan(CommandContext& ctx);

// Sets (cmd_set.cpp)
void cmd_sadd(CommandContext& ctx);
void cmd_srem(CommandContext& ctx);
void cmd_smembers(CommandContext& ctx);
void cmd_sismember(CommandContext& ctx);
void cmd_smismember(CommandContext& ctx);
void cmd_scard(CommandContext& ctx);
void cmd_spop(CommandContext& ctx);
void cmd_srandmember(CommandContext& ctx);
void cmd_smove(CommandContext& ctx);
void cmd_sinter(CommandContext& ctx);
void cmd_sintercard(CommandContext& ctx);
void cmd_sunion(CommandContext& ctx);
void cmd_sdiff(CommandContext& ctx);
void cmd_sinterstore(CommandContext& ctx);
void cmd_sunionstore(CommandContext& ctx);
void cmd_sdiffstore(CommandContext& ctx);
void cmd_sscan(CommandContext& ctx);
// SINTERCARD numkeys key... : the key positions (a KeyFinder).
void sintercard_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);

// Lists (cmd_list.cpp)
void cmd_lpush(CommandContext& ctx);
void cmd_rpush(CommandContext& ctx);
void cmd_lpushx(CommandContext& ctx);
void cmd_rpushx(CommandContext& ctx);
void cmd_lpop(CommandContext& ctx);
void cmd_rpop(CommandContext& ctx);
void cmd_llen(CommandContext& ctx);
void cmd_lrange(CommandContext& ctx);
void cmd_lindex(CommandContext& ctx);
void cmd_lset(CommandContext& ctx);
void cmd_linsert(CommandContext& ctx);
void cmd_lrem(CommandContext& ctx);
void cmd_ltrim(CommandContext& ctx);
void cmd_lpos(CommandContext& ctx);
void cmd_lmove(CommandContext& ctx);
void cmd_rpoplpush(CommandContext& ctx);
void cmd_lmpop(CommandContext& ctx);
void cmd_blpop(CommandContext& ctx);
void cmd_brpop(CommandContext& ctx);
void cmd_blmove(CommandContext& ctx);
void cmd_brpoplpush(CommandContext& ctx);
void cmd_blmpop(CommandContext& ctx);
// Key finders of LMPOP (numkeys at argv[1]) and BLMPOP (timeout, then numkeys at argv[2]).
void lmpop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);
void blmpop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);

// Sorted sets (cmd_zset.cpp, cmd_zset_ops.cpp)
void cmd_zadd(CommandContext& ctx);
void cmd_zincrby(CommandContext& ctx);
void cmd_zscore(CommandContext& ctx);
void cmd_zmscore(CommandContext& ctx);
void cmd_zcard(CommandContext& ctx);
void cmd_zcount(CommandContext& ctx);
void cmd_zlexcount(CommandContext& ctx);
void cmd_zrange(CommandContext& ctx);
void cmd_zrangebyscore(CommandContext& ctx);
void cmd_zrevrangebyscore(CommandContext& ctx);
void cmd_zrangebylex(CommandContext& ctx);
void cmd_zrevrangebylex(CommandContext& ctx);
void cmd_zrevrange(CommandContext& ctx);
void cmd_zrank(CommandContext& ctx);
void cmd_zrevrank(CommandContext& ctx);
void cmd_zrem(CommandContext& ctx);
void cmd_zremrangebyrank(CommandContext& ctx);
void cmd_zremrangebyscore(CommandContext& ctx);
void cmd_zremrangebylex(CommandContext& ctx);
void cmd_zpopmin(CommandContext& ctx);
void cmd_zpopmax(CommandContext& ctx);
void cmd_bzpopmin(CommandContext& ctx);
void cmd_bzpopmax(CommandContext& ctx);
void cmd_zrandmember(CommandContext& ctx);
void cmd_zscan(CommandContext& ctx);
void cmd_zunionstore(CommandContext& ctx);
void cmd_zinterstore(CommandContext& ctx);
void cmd_zdiffstore(CommandContext& ctx);
void cmd_zunion(CommandContext& ctx);
void cmd_zinter(CommandContext& ctx);
void cmd_zdiff(CommandContext& ctx);
// Key finders of ZUNION/ZINTER/ZDIFF (numkeys at argv[1]) and their STORE forms (destination,
// then numkeys at argv[2]).
void zsetop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);
void zsetop_store_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);

// Keyspace (cmd_keys.cpp)
void cmd_del(CommandContext& ctx);  // also UNLINK
void cmd_exists(CommandContext& ctx);
void cmd_touch(CommandContext& ctx);
void cmd_type(CommandContext& ctx);
void cmd_expire(CommandContext& ctx);      // EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (by argv[0])
void cmd_ttl(CommandContext& ctx);         // TTL, PTTL
void cmd_expiretime(CommandContext& ctx);  // EXPIRETIME, PEXPIRETIME
void cmd_persist(CommandContext& ctx);
void cmd_rename(CommandContext& ctx);
void cmd_renamenx(CommandContext& ctx);
void cmd_copy(CommandContext& ctx);
void cmd_keys(CommandContext& ctx);
void cmd_scan(CommandContext& ctx);
void cmd_randomkey(CommandContext& ctx);
void cmd_dbsize(CommandContext& ctx);
void cmd_flushall(CommandContext& ctx);  // also FLUSHDB
void cmd_object_encoding(CommandContext& ctx);
void cmd_object_freq(CommandContext& ctx);
void cmd_object_idletime(CommandContext& ctx);
void cmd_object_refcount(CommandContext& ctx);
void cmd_object_help(CommandContext& ctx);

// Connection (cmd_connection.cpp)
void cmd_ping(CommandContext& ctx);
void cmd_echo(CommandContext& ctx);
void cmd_quit(CommandContext& ctx);
void cmd_select(CommandContext& ctx);
void cmd_hello(CommandContext& ctx);
void cmd_auth(CommandContext& ctx);
void cmd_reset(CommandContext& ctx);
void cmd_client_id(CommandContext& ctx);
void cmd_client_setname(CommandContext& ctx);
void cmd_client_getname(CommandContext& ctx);
void cmd_client_list(CommandContext& ctx);
void cmd_client_info(CommandContext& ctx);
void cmd_client_kill(CommandContext& ctx);
void cmd_client_help(CommandContext& ctx);

// Transactions (cmd_transaction.cpp)
void cmd_multi(CommandContext& ctx);
void cmd_exec(CommandContext& ctx);
void cmd_discard(CommandContext& ctx);
void cmd_watch(CommandContext& ctx);
void cmd_unwatch(CommandContext& ctx);

// Server (cmd_server.cpp)
void cmd_info(CommandContext& ctx);
void cmd_command(CommandContext& ctx);  // bare COMMAND
void cmd_command_count(CommandContext& ctx);
void cmd_command_info(CommandContext& ctx);
void cmd_command_docs(CommandContext& ctx);
void cmd_command_list(CommandContext& ctx);
void cmd_command_getkeys(CommandContext& ctx);
void cmd_command_help(CommandContext& ctx);
void cmd_config_get(CommandContext& ctx);
void cmd_config_set(CommandContext& ctx);
void cmd_config_resetstat(CommandContext& ctx);
void cmd_config_help(CommandContext& ctx);
void cmd_time(CommandContext& ctx);
void cmd_lastsave(CommandContext& ctx);
void cmd_shutdown(CommandContext& ctx);
void cmd_bgrewriteaof(CommandContext& ctx);
void cmd_cluster_info(CommandContext& ctx);
void cmd_cluster_nodes(CommandContext& ctx);
void cmd_cluster_owner(CommandContext& ctx);
void cmd_cluster_help(CommandContext& ctx);

// Publish/subscribe (cmd_pubsub.cpp)
void cmd_subscribe(CommandContext& ctx);
void cmd_unsubscribe(CommandContext& ctx);
void cmd_psubscribe(CommandContext& ctx);
void cmd_punsubscribe(CommandContext& ctx);
void cmd_publish(CommandContext& ctx);
void cmd_pubsub_channels(CommandContext& ctx);
void cmd_pubsub_numsub(CommandContext& ctx);
void cmd_pubsub_numpat(CommandContext& ctx);
void cmd_pubsub_help(CommandContext& ctx);
// PING from a RESP2 client in subscribed mode: ["pong", message-or-empty], as Redis replies
// there (the server runs it instead of PING's row handler in that context).
void cmd_ping_subscribed(CommandContext& ctx);

// Bitmaps (cmd_bitmap.cpp)
void cmd_setbit(CommandContext& ctx);
void cmd_getbit(CommandContext& ctx);
void cmd_bitcount(CommandContext& ctx);
void cmd_bitpos(CommandContext& ctx);
void cmd_bitop(CommandContext& ctx);
void cmd_bitfield(CommandContext& ctx);
void cmd_bitfield_ro(CommandContext& ctx);

// HyperLogLog (cmd_hyperloglog.cpp)
void cmd_pfadd(CommandContext& ctx);
void cmd_pfcount(CommandContext& ctx);
void cmd_pfmerge(CommandContext& ctx);
void cmd_pfdebug(CommandContext& ctx);
void cmd_pfselftest(CommandContext& ctx);

}  // namespace ringkv::engine
