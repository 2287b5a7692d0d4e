// Error texts, exactly as Redis 7.0 writes them (without the leading '-' and trailing CRLF).
// Every reply error that more than one place can produce lives here.
#pragma once

#include <string_view>

namespace ringkv::protocol::err {

// Whether a reply (a whole RESP value) is an error.
inline bool is_error_reply(std::string_view reply) { return !reply.empty() && reply[0] == '-'; }

inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
// A count or index argument that must be positive (LPOP/RPOP count, SPOP count, ZPOPMIN count...).
inline constexpr std::string_view kMustBePositive = "ERR value is out of range, must be positive";
// LPOP/RPOP/ZPOPMIN/ZPOPMAX ... COUNT 0 in their blocking and multi-key forms.
inline constexpr std::string_view kCountGreaterThanZero = "ERR count should be greater than 0";
inline constexpr std::string_view kLimitNegative = "ERR LIMIT can't be negative";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
// An integer argument that must fit an int (Redis's getIntFromObjectOrReply without a message).
inline constexpr std::string_view kIntOutOfRange =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
inline constexpr std::string_view kInvalidExpireTime = "ERR invalid expire time in '%s' command";
inline constexpr std::string_view kStringTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr std::string_view kOutOfRangeOffset = "ERR offset is out of range";
// ZADD INCR / ZINCRBY of an increment that makes the score NaN (inf + -inf).
inline constexpr std::string_view kScoreNaN = "ERR resulting score is not a number (NaN)";
inline constexpr std::string_view kIncrFloatNaN = "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kMaxClients = "ERR max number of clients reached";
inline constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
// Write commands (and PING) while save rules are set and the last BGSAVE failed
// (stop-writes-on-bgsave-error), or while writes to the append-only file fail (kMisconfAof
// followed by the system's error text).
inline constexpr std::string_view kMisconfRdb =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB "
    "error.";
inline constexpr std::string_view kMisconfAof = "MISCONF Errors writing to the AOF file: ";
// A write while fewer good replicas than min-replicas-to-write have its keys.
inline constexpr std::string_view kNoGoodReplicas = "NOREPLICAS Not enough good replicas to write.";
// Any command but AUTH, HELLO, RESET, QUIT... before a client authenticated (requirepass).
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
// Written to a client from a non-loopback address, which is then closed, when protected mode is
// on and no password is set.
inline constexpr std::string_view kProtectedMode =
    "DENIED Redis is running in protected mode because protected mode is enabled and no password "
    "is set for the default user. In this mode connections are only accepted from the loopback "
    "interface. If you want to connect from external computers to Redis you may adopt one of the "
    "following solutions: 1) Just disable protected mode sending the command 'CONFIG SET "
    "protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the "
    "server manually just for testing, restart it with the '--protected-mode no' option. 4) "
    "Setup a an authentication password for the default user. NOTE: You only need to do one of "
    "the above things in order for the server to start accepting connections from the outside.";
// DEBUG, and MODULE LOAD/LOADEX/UNLOAD, refused by enable-debug-command / enable-module-command
// (Redis's rejection of a protected command).
inline constexpr std::string_view kDebugNotAllowed =
    "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
    "can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server.";
inline constexpr std::string_view kModuleNotAllowed =
    "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", "
    "you can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server.";
// EXEC of a transaction that had a command refused while queuing.
inline constexpr std::string_view kExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";
// Followed by the reason a transaction was refused at EXEC (e.g. kNoAuth, kOom).
inline constexpr std::string_view kExecAbortBecause =
    "EXECABORT Transaction discarded because of: ";
inline constexpr std::string_view kDecrementOverflow = "ERR decrement would overflow";
// '%s' is the command's full name (lowercase), as for kInvalidExpireTime.
inline constexpr std::string_view kWrongArity = "ERR wrong number of arguments for '%s' command";

// Bitmaps (SETBIT, GETBIT, BITPOS, BITOP, BITFIELD).
inline constexpr std::string_view kBitOffset = "ERR bit offset is not an integer or out of range";
inline constexpr std::string_view kBitValue = "ERR bit is not an integer or out of range";
inline constexpr std::string_view kBitposBit = "ERR The bit argument must be 1 or 0.";
inline constexpr std::string_view kBitopNot =
    "ERR BITOP NOT must be called with a single source key.";
inline constexpr std::string_view kBitfieldType =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 "
    "is.";
inline constexpr std::string_view kBitfieldOverflow = "ERR Invalid OVERFLOW type specified";
inline constexpr std::string_view kBitfieldReadonly =
    "ERR BITFIELD_RO only supports the GET subcommand";
// HyperLogLog (PFADD, PFCOUNT, PFMERGE, PFDEBUG).
inline constexpr std::string_view kNotHll =
    "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr std::string_view kInvalidHll = "INVALIDOBJ Corrupted HLL object detected";
inline constexpr std::string_view kHllKeyMissing = "ERR The specified key does not exist";
inline constexpr std::string_view kHllNotSparse = "ERR HLL encoding is not sparse";

// Protocol errors (the connection is closed after replying).
inline constexpr std::string_view kProtoInvalidMultibulk =
    "ERR Protocol error: invalid multibulk length";
inline constexpr std::string_view kProtoInvalidBulk = "ERR Protocol error: invalid bulk length";
inline constexpr std::string_view kProtoBigMultibulkCount =
    "ERR Protocol error: too big mbulk count string";
inline constexpr std::string_view kProtoUnauthMultibulk =
    "ERR Protocol error: unauthenticated multibulk length";
inline constexpr std::string_view kProtoUnauthBulk =
    "ERR Protocol error: unauthenticated bulk length";
inline constexpr std::string_view kProtoBigBulkCount =
    "ERR Protocol error: too big bulk count string";
inline constexpr std::string_view kProtoBigInline = "ERR Protocol error: too big inline request";
inline constexpr std::string_view kProtoUnbalancedQuotes =
    "ERR Protocol error: unbalanced quotes in request";
// Followed by the offending byte and a closing quote: "ERR Protocol error: expected '$', got 'X'".
inline constexpr std::string_view kProtoExpectedDollar = "ERR Protocol error: expected '$', got '";

}  // namespace ringkv::protocol::err
