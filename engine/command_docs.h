// COMMAND DOCS argument trees, parsed from a table row's syntax string.
//
// The syntax notation is Redis's usage notation plus the facts COMMAND DOCS reports:
//   name                 a string argument            name<type>   integer, double, key, pattern,
//   TOKEN                a pure token (name: token)                unix-time; key:N = key spec N
//                                                          (pattern:N likewise)
//   TOKEN=name<type>     an argument introduced by a token
//   name:"TOKEN"         a pure token with a name of its own (equal:"=")
//   [item]               optional                     item...      multiple (+ multiple_token)
//   [name: a b] / (name: a b)      an optional / required block named `name`
//   [name: a | b] / (name: a | b)  an optional / required choice (oneof); TOKEN= may prefix name
//   item@7.0.0 / item~2.8.12       since / deprecated since
// e.g. "key<key> value [condition: NX | XX]@2.6.12 [GET]@6.2.0".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"

namespace ringkv::engine {

struct DocArg {
  enum class Type {
    kString,
    kInteger,
    kDouble,
    kKey,
    kPattern,
    kUnixTime,
    kPureToken,
    kOneof,
    kBlock
  };
  std::string name;  // pure tokens are named by their lowercased token
  Type type = Type::kString;
  int key_spec_index = -1;  // for kKey
  std::string_view token;
  std::string_view since;
  std::string_view deprecated_since;
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;
  std::vector<DocArg> arguments;  // for kOneof and kBlock
};

// The type's name as COMMAND DOCS prints it ("pure-token", "unix-time", ...).
std::string_view doc_arg_type_name(DocArg::Type type);

// Parses a syntax string into `out`. Returns false when the syntax is malformed (the table's
// tests parse every row, so a running server never sees a malformed one).
bool parse_syntax(std::string_view syntax, std::vector<DocArg>& out);

// Writes an argument list as COMMAND DOCS's "arguments" value (RESP2 or RESP3 shapes).
void write_doc_args(protocol::ReplyWriter& reply, const std::vector<DocArg>& args);

// The plain usage line for humans, as Redis's docs print it:
// "key value [NX | XX] [GET] [EX seconds | PX milliseconds | ...]".
std::string usage_text(std::string_view syntax);

// The README's list of supported commands, generated from the command table: one markdown
// bullet per command (and per subcommand) with its usage line, grouped by command group.
std::string command_reference_markdown();

}  // namespace ringkv::engine
