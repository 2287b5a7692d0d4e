// Redis's sdscatrepr: a byte string quoted, with C escapes for quotes, backslashes, control
// characters and bytes that are not printable. MONITOR's lines and the Lua debugger's values
// show arguments this way.
#pragma once

#include <string>
#include <string_view>

namespace ringkv::common {

void append_repr(std::string& out, std::string_view s);

}  // namespace ringkv::common
