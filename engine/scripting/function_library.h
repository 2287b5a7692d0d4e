// The function libraries of a node (FUNCTION LOAD ... / FCALL), as Redis 7.0 keeps them: each
// library has a name, its code (the whole text, "#!lua name=..." line included) and the
// functions its code registered; function names are unique over every library and compared
// without case, library names are case-sensitive. This file is the bookkeeping and the wire
// format (FUNCTION DUMP's payload, an RDB file's FUNCTION2 records); compiling a library's Lua
// and calling its functions is the ScriptEngine's (script_engine.h, lua_functions.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ringkv::engine {

struct FunctionLibrary;

// One function a library registered (redis.register_function).
struct FunctionDef {
  std::string name;
  std::optional<std::string> description;
  uint32_t flags = 0;                        // ScriptFlag bits
  int ref = 0;                               // the callback's reference in the functions' Lua state
  const FunctionLibrary* library = nullptr;  // set once the library is linked
};

struct FunctionLibrary {
  std::string name;
  std::string code;
  std::vector<FunctionDef> functions;  // in registration order
};

// The "#!<engine> name=<name>" line of a library's code (functionExtractLibMetaData).
struct LibraryMetadata {
  std::string engine;  // as written ("lua", "LUA"...)
  std::string name;
  size_t body = 0;  // offset of the code after the metadata line (its newline included)
};

// Parses the metadata line; false with Redis's error text (without "ERR ") in `error`.
bool parse_library_metadata(std::string_view code, LibraryMetadata& out, std::string& error);

// Library and function names: letters, digits and '_', at least one character.
bool valid_function_name(std::string_view name);

// The libraries and their functions. Libraries are kept by name (a std::map: FUNCTION LIST and
// DUMP list them in name order; Redis's order is its hash table's, which differs between runs).
class FunctionLibraries {
 public:
  using Libraries = std::map<std::string, std::unique_ptr<FunctionLibrary>, std::less<>>;

  const Libraries& libraries() const { return libraries_; }
  const FunctionLibrary* find_library(std::string_view name) const;
  const FunctionDef* find_function(std::string_view name) const;
  size_t function_count() const { return functions_.size(); }
  bool empty() const { return libraries_.empty(); }

  // Adds `lib`, whose functions must not collide with any here (checked by the caller).
  void link(std::unique_ptr<FunctionLibrary> lib);
  // Takes the library named `name` out (nullptr when there is none).
  std::unique_ptr<FunctionLibrary> unlink(std::string_view name);
  // Takes every library out.
  std::vector<std::unique_ptr<FunctionLibrary>> take_all();
  // Bytes of the libraries' names and code (INFO used_memory_functions).
  size_t bytes() const;

 private:
  Libraries libraries_;
  std::unordered_map<std::string, FunctionDef*> functions_;  // lowercase name → function
};

// FUNCTION DUMP's payload: a FUNCTION2 record (opcode 245, the code as an RDB string) per
// library, the RDB version (2 bytes LE) and the CRC64 of all before it (8 bytes LE).
std::string function_dump_payload(const FunctionLibraries& libraries);
// The library codes of a FUNCTION RESTORE payload; false with Redis's error text (without
// "ERR ") when the footer or a record is wrong.
bool parse_function_payload(std::string_view payload, std::vector<std::string>& codes,
                            std::string& error);
// One FUNCTION2 record of an RDB file: the opcode and the code.
void append_function_record(std::string& out, std::string_view code);

inline constexpr uint8_t kRdbOpcodeFunction2 = 245;
inline constexpr uint8_t kRdbOpcodeFunctionPreGa = 246;

}  // namespace ringkv::engine
