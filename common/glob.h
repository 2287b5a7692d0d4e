// Glob-style pattern matching with exactly the semantics of Redis's stringmatchlen(), used by
// KEYS, SCAN MATCH and every other command that takes a Redis glob pattern.
#pragma once

#include <string_view>

namespace ringkv::common {

// True when `s` matches the glob `pattern`: `*` any run of bytes, `?` one byte, `[abc]` a set,
// `[^abc]` its complement, `[a-z]` a range (either order), `\x` the literal byte x. `nocase`
// folds ASCII letters. Malformed patterns (an unterminated `[`, a trailing `\`) are read the
// way Redis reads them, and nesting is bounded as in Redis, so no pattern can exhaust the stack.
bool glob_match(std::string_view pattern, std::string_view s, bool nocase = false);

}  // namespace ringkv::common
