// Encoding of requests (commands) as RESP arrays of bulk strings: what a client sends, what a
// relay link forwards and what the append-only file stores.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace ringkv::protocol {

// "*<n>\r\n": the header of a request of n arguments.
void append_request_header(std::string& out, size_t n);
// "$<len>\r\n<s>\r\n": one argument.
void append_request_bulk(std::string& out, std::string_view s);
// A whole request.
void append_request(std::string& out, std::span<const std::string_view> argv);

}  // namespace ringkv::protocol
