// Function libraries: metadata, names, the registry and the DUMP payload (function_library.h).
#include "engine/scripting/function_library.h"

#include <cctype>

#include "common/numbers.h"
#include "engine/rdb/rdb_format.h"
#include "engine/rdb/rdb_value.h"

namespace ringkv::engine {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// sdssplitargs: words separated by spaces, "double quotes" with C escapes (\n, \xHH, ...) and
// 'single quotes' (only \' escaped), a quote anywhere in a word starting a quoted part, and a
// closing quote that must end the word. False for unbalanced quotes.
bool split_args(std::string_view line, std::vector<std::string>& out) {
  size_t p = 0;
  while (true) {
    while (p < line.size() && std::isspace(static_cast<unsigned char>(line[p]))) ++p;
    if (p >= line.size()) return true;
    std::string word;
    bool inq = false, insq = false, done = false;
    while (!done) {
      if (inq) {
        if (p >= line.size()) return false;
        if (line[p] == '\\' && p + 3 < line.size() && line[p + 1] == 'x' &&
            hex_digit(line[p + 2]) >= 0 && hex_digit(line[p + 3]) >= 0) {
          word.push_back(static_cast<char>(hex_digit(line[p + 2]) * 16 + hex_digit(line[p + 3])));
          p += 3;
        } else if (line[p] == '\\' && p + 1 < line.size()) {
          ++p;
          const char c = line[p];
          word.push_back(c == 'n'   ? '\n'
                         : c == 'r' ? '\r'
                         : c == 't' ? '\t'
                         : c == 'b' ? '\b'
                         : c == 'a' ? '\a'
                                    : c);
        } else if (line[p] == '"') {
          if (p + 1 < line.size() && !std::isspace(static_cast<unsigned char>(line[p + 1]))) {
            return false;
          }
          done = true;
        } else {
          word.push_back(line[p]);
        }
      } else if (insq) {
        if (p >= line.size()) return false;
        if (line[p] == '\\' && p + 1 < line.size() && line[p + 1] == '\'') {
          ++p;
          word.push_back('\'');
        } else if (line[p] == '\'') {
          if (p + 1 < line.size() && !std::isspace(static_cast<unsigned char>(line[p + 1]))) {
            return false;
          }
          done = true;
        } else {
          word.push_back(line[p]);
        }
      } else if (p >= line.size() || std::isspace(static_cast<unsigned char>(line[p]))) {
        done = true;
      } else if (line[p] == '"') {
        inq = true;
      } else if (line[p] == '\'') {
        insq = true;
      } else {
        word.push_back(line[p]);
      }
      if (p < line.size()) ++p;
    }
    out.push_back(std::move(word));
  }
}

bool starts_with_ignore_case(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

}  // namespace

bool parse_library_metadata(std::string_view code, LibraryMetadata& out, std::string& error) {
  if (code.substr(0, 2) != "#!") {
    error = "Missing library metadata";
    return false;
  }
  const size_t end = code.find('\n');
  if (end == std::string_view::npos) {
    error = "Invalid library metadata";
    return false;
  }
  std::vector<std::string> parts;
  if (!split_args(code.substr(0, end), parts) || parts.empty()) {
    error = "Invalid library metadata";
    return false;
  }
  out.engine = parts[0].substr(2);
  out.name.clear();
  bool named = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (starts_with_ignore_case(parts[i], "name=")) {
      if (named) {
        error = "Invalid metadata value, name argument was given multiple times";
        return false;
      }
      named = true;
      out.name = parts[i].substr(5);
      continue;
    }
    error = "Invalid metadata value given: " + parts[i];
    return false;
  }
  if (!named) {
    error = "Library name was not given";
    return false;
  }
  out.body = end;
  return true;
}

bool valid_function_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

const FunctionLibrary* FunctionLibraries::find_library(std::string_view name) const {
  auto it = libraries_.find(name);
  return it == libraries_.end() ? nullptr : it->second.get();
}

const FunctionDef* FunctionLibraries::find_function(std::string_view name) const {
  auto it = functions_.find(common::lowercase(name));
  return it == functions_.end() ? nullptr : it->second;
}

void FunctionLibraries::link(std::unique_ptr<FunctionLibrary> lib) {
  for (FunctionDef& f : lib->functions) {
    f.library = lib.get();
    functions_[common::lowercase(f.name)] = &f;
  }
  std::string name = lib->name;
  libraries_[std::move(name)] = std::move(lib);
}

std::unique_ptr<FunctionLibrary> FunctionLibraries::unlink(std::string_view name) {
  auto it = libraries_.find(name);
  if (it == libraries_.end()) return nullptr;
  std::unique_ptr<FunctionLibrary> lib = std::move(it->second);
  libraries_.erase(it);
  for (const FunctionDef& f : lib->functions) functions_.erase(common::lowercase(f.name));
  return lib;
}

std::vector<std::unique_ptr<FunctionLibrary>> FunctionLibraries::take_all() {
  std::vector<std::unique_ptr<FunctionLibrary>> all;
  for (auto& [name, lib] : libraries_) all.push_back(std::move(lib));
  libraries_.clear();
  functions_.clear();
  return all;
}

size_t FunctionLibraries::bytes() const {
  size_t n = 0;
  for (const auto& [name, lib] : libraries_) {
    n += name.size() + lib->code.size();
    for (const FunctionDef& f : lib->functions) {
      n += f.name.size() + (f.description ? f.description->size() : 0);
    }
  }
  return n;
}

void append_function_record(std::string& out, std::string_view code) {
  out.push_back(static_cast<char>(kRdbOpcodeFunction2));
  rdb::write_string(out, code);
}

std::string function_dump_payload(const FunctionLibraries& libraries) {
  std::string out;
  for (const auto& [name, lib] : libraries.libraries()) append_function_record(out, lib->code);
  append_dump_footer(out);
  return out;
}

bool parse_function_payload(std::string_view payload, std::vector<std::string>& codes,
                            std::string& error) {
  if (!verify_dump_payload(payload)) {
    error = "DUMP payload version or checksum are wrong";
    return false;
  }
  rdb::Reader r(payload.substr(0, payload.size() - 10));
  while (r.remaining() > 0) {
    uint8_t type = 0;
    if (!r.read_byte(type)) {
      error = "can not read data type";
      return false;
    }
    if (type == kRdbOpcodeFunctionPreGa) {
      error = "Pre-GA function format not supported";
      return false;
    }
    if (type != kRdbOpcodeFunction2) {
      error = "given type is not a function";
      return false;
    }
    std::string code;
    if (!r.read_string(code)) {
      error = "Failed loading library payload";
      return false;
    }
    codes.push_back(std::move(code));
  }
  return true;
}

}  // namespace ringkv::engine
