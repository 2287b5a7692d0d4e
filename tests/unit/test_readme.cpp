// Keeps the README true: its list of supported commands must equal the command table it is
// generated from, and its configuration reference must equal `ringkv-server --print-config` of
// the defaults. On a mismatch the expected text is written to readme_<section>.md in the working
// directory, ready to paste between the README's markers.
#include <doctest/doctest.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>

#include "conf/config.h"
#include "engine/command.h"
#include "engine/command_docs.h"

#ifndef RINGKV_SOURCE_DIR
#error "RINGKV_SOURCE_DIR must name the source tree"
#endif

namespace {

std::string readme() {
  std::ifstream in(std::string(RINGKV_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text between "<!-- name:begin -->\n" and "<!-- name:end -->".
std::string section(const std::string& text, const std::string& name) {
  const std::string begin = "<!-- " + name + ":begin -->\n";
  size_t b = text.find(begin);
  size_t e = text.find("<!-- " + name + ":end -->");
  if (b == std::string::npos || e == std::string::npos || e < b) return "(section missing)";
  return text.substr(b + begin.size(), e - b - begin.size());
}

void check_section(const std::string& name, const std::string& expected) {
  std::string listed = section(readme(), name);
  if (listed != expected) std::ofstream("readme_" + name + ".md") << expected;
  CHECK_MESSAGE(listed == expected,
                "README section '" << name << "' is stale; see readme_" << name << ".md");
}

}  // namespace

TEST_CASE("README lists exactly the commands of the command table") {
  check_section("commands", ringkv::engine::command_reference_markdown());
}

TEST_CASE("the generated command list names every command of the table") {
  const std::string list = ringkv::engine::command_reference_markdown();
  for (const auto& spec : ringkv::engine::command_table()) {
    std::string name(spec.name);
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK_MESSAGE(list.find("- `" + name) != std::string::npos, name << " is missing");
  }
}

TEST_CASE("README's configuration reference is the default configuration") {
  check_section("config", "```toml\n" + ringkv::conf::to_toml(ringkv::conf::Config{}) + "```\n");
}
