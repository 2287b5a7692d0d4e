// COMMAND DOCS argument trees: a recursive-descent parser for the table's syntax notation (see
// command_docs.h), the DOCS reply shape, and the plain usage line.
#include "engine/command_docs.h"

#include <cctype>

#include "engine/command.h"

namespace ringkv::engine {

namespace {

struct TypeName {
  DocArg::Type type;
  std::string_view name;
};

constexpr TypeName kTypeNames[] = {
    {DocArg::Type::kString, "string"},        {DocArg::Type::kInteger, "integer"},
    {DocArg::Type::kDouble, "double"},        {DocArg::Type::kKey, "key"},
    {DocArg::Type::kPattern, "pattern"},      {DocArg::Type::kUnixTime, "unix-time"},
    {DocArg::Type::kPureToken, "pure-token"}, {DocArg::Type::kOneof, "oneof"},
    {DocArg::Type::kBlock, "block"},
};

class SyntaxParser {
 public:
  explicit SyntaxParser(std::string_view s) : s_(s) {}

  bool parse(std::vector<DocArg>& out) {
    while (pos_ < s_.size()) {
      if (!out.empty() && !eat(' ')) return false;
      DocArg arg;
      if (!parse_item(arg)) return false;
      out.push_back(std::move(arg));
    }
    return true;
  }

 private:
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat(std::string_view lit) {
    if (s_.substr(pos_).starts_with(lit)) {
      pos_ += lit.size();
      return true;
    }
    return false;
  }

  // A bare word: stops at any character with a meaning in the notation.
  std::string_view word() {
    size_t start = pos_;
    while (pos_ < s_.size() && std::string_view(" |()[]<>@~+=.").find(s_[pos_]) == s_.npos) {
      ++pos_;
    }
    return s_.substr(start, pos_ - start);
  }

  static bool is_token(std::string_view w) {
    bool letter = false;
    for (char c : w) {
      if (std::islower(static_cast<unsigned char>(c))) return false;
      letter |= std::isupper(static_cast<unsigned char>(c)) != 0;
    }
    return letter;
  }

  // "TOKEN=" when present.
  std::string_view token_prefix() {
    size_t saved = pos_;
    std::string_view w = word();
    if (is_token(w) && eat('=')) return w;
    pos_ = saved;
    return {};
  }

  // "name: " opening a group; restores the position and returns false when absent.
  bool group_head(DocArg& arg) {
    size_t saved = pos_;
    arg.token = token_prefix();
    // Group names are plain identifiers, so the first ':' ends them.
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '-')) {
      ++pos_;
    }
    std::string_view name = s_.substr(start, pos_ - start);
    if (!name.empty() && eat(": ")) {
      arg.name = std::string(name);
      return true;
    }
    pos_ = saved;
    arg.token = {};
    return false;
  }

  // name:"TOKEN": a pure token named otherwise than its lowercased self (XADD's equal:"=").
  bool named_token(DocArg& arg) {
    size_t saved = pos_;
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '-')) {
      ++pos_;
    }
    std::string_view name = s_.substr(start, pos_ - start);
    if (name.empty() || !eat(":\"")) {
      pos_ = saved;
      return false;
    }
    // The token may be empty (MIGRATE's empty_string:"").
    size_t end = s_.find('"', pos_);
    if (end == s_.npos) return false;
    arg.type = DocArg::Type::kPureToken;
    arg.name = std::string(name);
    arg.token = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }

  bool parse_type(DocArg& arg) {
    if (!eat('<')) return true;
    size_t end = s_.find('>', pos_);
    if (end == s_.npos) return false;
    std::string_view t = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    if (t.starts_with("key")) {
      arg.type = DocArg::Type::kKey;
      arg.key_spec_index = 0;
      if (t.size() > 3) {
        if (t[3] != ':' || t.size() != 5 || !std::isdigit(static_cast<unsigned char>(t[4]))) {
          return false;
        }
        arg.key_spec_index = t[4] - '0';
      }
      return true;
    }
    // A pattern naming keys (SORT's BY and GET): "pattern:N", N its key spec.
    if (t.size() == 9 && t.starts_with("pattern:") &&
        std::isdigit(static_cast<unsigned char>(t[8]))) {
      arg.type = DocArg::Type::kPattern;
      arg.key_spec_index = t[8] - '0';
      return true;
    }
    for (const TypeName& tn : kTypeNames) {
      if (tn.name == t && tn.type != DocArg::Type::kPureToken && tn.type != DocArg::Type::kOneof &&
          tn.type != DocArg::Type::kBlock) {
        arg.type = tn.type;
        return true;
      }
    }
    return false;
  }

  std::string_view version() {
    size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) {
      ++pos_;
    }
    return s_.substr(start, pos_ - start);
  }

  bool parse_suffixes(DocArg& arg) {
    for (;;) {
      if (eat("...")) {
        arg.multiple = true;
      } else if (eat('+')) {
        arg.multiple_token = true;
      } else if (eat('@')) {
        arg.since = version();
        if (arg.since.empty()) return false;
      } else if (eat('~')) {
        arg.deprecated_since = version();
        if (arg.deprecated_since.empty()) return false;
      } else {
        return true;
      }
    }
  }

  bool parse_group_body(DocArg& arg, char closer) {
    bool oneof = false;
    for (;;) {
      DocArg child;
      if (!parse_item(child)) return false;
      arg.arguments.push_back(std::move(child));
      if (eat(closer)) break;
      if (eat(" | ")) {
        if (arg.arguments.size() > 1 && !oneof) return false;
        oneof = true;
      } else if (!eat(' ') || oneof) {
        return false;
      }
    }
    arg.type = oneof ? DocArg::Type::kOneof : DocArg::Type::kBlock;
    return true;
  }

  bool parse_item(DocArg& arg) {
    if (pos_ < s_.size() && (s_[pos_] == '[' || s_[pos_] == '(')) {
      bool optional = s_[pos_] == '[';
      char closer = optional ? ']' : ')';
      ++pos_;
      if (group_head(arg)) {
        if (!parse_group_body(arg, closer)) return false;
      } else {
        if (!optional || !parse_item(arg) || !eat(closer)) return false;
      }
      arg.optional = optional;
      return parse_suffixes(arg);
    }
    if (named_token(arg)) return parse_suffixes(arg);
    arg.token = token_prefix();
    std::string_view w = word();
    if (w.empty()) return false;
    if (arg.token.empty() && is_token(w)) {
      arg.type = DocArg::Type::kPureToken;
      arg.token = w;
      arg.name.reserve(w.size());
      for (char c : w)
        arg.name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      arg.name = std::string(w);
      if (!parse_type(arg)) return false;
    }
    return parse_suffixes(arg);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

void render(const DocArg& arg, bool with_token, std::string& out, bool repeat = true) {
  if (with_token && !arg.token.empty() && arg.type != DocArg::Type::kPureToken) {
    out.append(arg.token);
    out.push_back(' ');
  }
  switch (arg.type) {
    case DocArg::Type::kPureToken:
      out.append(arg.token.empty() ? std::string_view("\"\"") : arg.token);
      break;
    case DocArg::Type::kBlock:
      for (size_t i = 0; i < arg.arguments.size(); ++i) {
        if (i > 0) out.push_back(' ');
        const DocArg& child = arg.arguments[i];
        if (child.optional) out.push_back('[');
        render(child, true, out);
        if (child.optional) out.push_back(']');
      }
      break;
    case DocArg::Type::kOneof:
      if (!arg.optional) out.push_back('<');
      for (size_t i = 0; i < arg.arguments.size(); ++i) {
        if (i > 0) out.append(" | ");
        const DocArg& child = arg.arguments[i];
        if (child.optional) out.push_back('[');
        render(child, true, out);
        if (child.optional) out.push_back(']');
      }
      if (!arg.optional) out.push_back('>');
      break;
    default:
      out.append(arg.name);
      break;
  }
  if (arg.multiple && repeat) {
    out.append(" [");
    render(arg, arg.multiple_token, out, false);
    out.append(" ...]");
  }
}

}  // namespace

std::string_view doc_arg_type_name(DocArg::Type type) {
  for (const TypeName& tn : kTypeNames) {
    if (tn.type == type) return tn.name;
  }
  return "string";
}

bool parse_syntax(std::string_view syntax, std::vector<DocArg>& out) {
  out.clear();
  return SyntaxParser(syntax).parse(out);
}

void write_doc_args(protocol::ReplyWriter& reply, const std::vector<DocArg>& args) {
  reply.array(args.size());
  for (const DocArg& a : args) {
    bool group = a.type == DocArg::Type::kOneof || a.type == DocArg::Type::kBlock;
    size_t flags = size_t{a.optional} + size_t{a.multiple} + size_t{a.multiple_token};
    // A pure token always says its token, even an empty one.
    const bool token = !a.token.empty() || a.type == DocArg::Type::kPureToken;
    reply.map(2 + (a.key_spec_index >= 0) + token + !a.since.empty() + !a.deprecated_since.empty() +
              (flags > 0) + group);
    reply.bulk("name");
    reply.bulk(a.name);
    reply.bulk("type");
    reply.bulk(doc_arg_type_name(a.type));
    if (a.key_spec_index >= 0) {
      reply.bulk("key_spec_index");
      reply.integer(a.key_spec_index);
    }
    if (token) {
      reply.bulk("token");
      reply.bulk(a.token);
    }
    if (!a.since.empty()) {
      reply.bulk("since");
      reply.bulk(a.since);
    }
    if (!a.deprecated_since.empty()) {
      reply.bulk("deprecated_since");
      reply.bulk(a.deprecated_since);
    }
    if (flags > 0) {
      reply.bulk("flags");
      reply.set(flags);
      if (a.optional) reply.simple("optional");
      if (a.multiple) reply.simple("multiple");
      if (a.multiple_token) reply.simple("multiple_token");
    }
    if (group) {
      reply.bulk("arguments");
      write_doc_args(reply, a.arguments);
    }
  }
}

std::string usage_text(std::string_view syntax) {
  std::vector<DocArg> args;
  if (!parse_syntax(syntax, args)) return std::string(syntax);
  DocArg top;
  top.type = DocArg::Type::kBlock;
  top.arguments = std::move(args);
  std::string out;
  render(top, true, out);
  return out;
}

std::string command_reference_markdown() {
  // Groups in the order a reader looks for them.
  static constexpr std::string_view kGroups[] = {
      "string",     "hash",        "list",    "set",      "sorted-set",   "stream",
      "bitmap",     "hyperloglog", "geo",     "generic",  "transactions", "pubsub",
      "connection", "server",      "cluster", "scripting"};
  static constexpr std::string_view kTitles[] = {
      "Strings",    "Hashes",      "Lists",   "Sets",     "Sorted sets",  "Streams",
      "Bitmaps",    "HyperLogLog", "Geo",     "Keys",     "Transactions", "Pub/Sub",
      "Connection", "Server",      "Cluster", "Scripting"};
  std::string out;
  auto upper = [](std::string_view s) {
    std::string u(s);
    for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
  };
  auto line = [&](std::string name, const CommandSpec& spec) {
    std::string usage = usage_text(spec.syntax);
    out += "- `" + name + (usage.empty() ? "" : " " + usage) + "`";
    if (!spec.summary.empty()) {
      out += " — ";
      out.append(spec.summary);
    }
    out += "\n";
  };
  for (size_t g = 0; g < std::size(kGroups); ++g) {
    bool any = false;
    for (const CommandSpec& spec : command_table()) any = any || spec.group == kGroups[g];
    if (!any) continue;
    out += "\n**" + std::string(kTitles[g]) + "**\n\n";
    for (const CommandSpec& spec : command_table()) {
      if (spec.group != kGroups[g]) continue;
      if (spec.handler != nullptr) line(upper(spec.name), spec);
      if (!spec.subcommands.empty()) {
        for (const CommandSpec& sub : spec.subcommands) {
          line(upper(spec.name) + " " + upper(sub.name), sub);
        }
      }
    }
  }
  return out;
}

}  // namespace ringkv::engine
