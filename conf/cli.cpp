// The ringkv-server command line: --config, one flag per parameter-table row, --help,
// --version and --print-config, parsed with CLI11.
#include <CLI/CLI.hpp>
#include <vector>

#include "conf/config.h"
#include "conf/params.h"

namespace ringkv::conf {
namespace {

constexpr int kUsageError = 2;

// The first of a row's flag names ("--loglevel" of "--loglevel,--log-level"), for messages.
std::string_view primary_flag(const detail::Row& row) {
  return row.flags.substr(0, row.flags.find(','));
}

ParseOutcome fail(std::string message) { return {std::nullopt, kUsageError, message + "\n"}; }

}  // namespace

ParseOutcome parse_command_line(int argc, const char* const* argv) {
  CLI::App app{"ringkv-server " RINGKV_VERSION
               ": an in-memory key-value server speaking the Redis protocol, clustered by "
               "consistent hashing.\nFlags override the --config file.",
               "ringkv-server"};
  std::string config_path;
  bool show_version = false;
  bool print_config = false;
  CLI::Option* config_option =
      app.add_option("--config", config_path, "TOML configuration file")->type_name("FILE");
  app.add_flag("--version", show_version, "Print the version and exit");
  app.add_flag("--print-config", print_config,
               "Print the effective configuration as TOML and exit");

  const auto& rows = detail::rows();
  // One slot per row, sized up front: CLI11 keeps pointers to them.
  std::vector<std::vector<std::string>> values(rows.size());
  std::vector<CLI::Option*> options(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const detail::Row& row = rows[i];
    if (row.flags.empty()) continue;  // file-only, as Redis's rename-command
    std::string help = std::string(row.description) + " [" + std::string(row.section) + "." +
                       std::string(row.key) + "]";
    CLI::Option* option = app.add_option(std::string(row.flags), values[i], help);
    if (row.repeatable) {
      option->type_name("HOST:PORT[=WEIGHT]")
          ->allow_extra_args(false)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    } else {
      option->type_name("VALUE")->expected(1)->multi_option_policy(
          CLI::MultiOptionPolicy::TakeLast);
    }
    options[i] = option;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return {std::nullopt, 0, app.help()};
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + "\nRun with --help for more information.");
  }
  if (show_version) return {std::nullopt, 0, "ringkv-server " RINGKV_VERSION "\n"};

  Config config;
  if (config_option->count() > 0) {
    if (std::string error = load_file(config_path, config); !error.empty()) return fail(error);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (options[i] == nullptr || options[i]->count() == 0) continue;
    std::string text;
    for (const std::string& v : values[i]) text += (text.empty() ? "" : ",") + v;
    detail::Reason why = rows[i].from_text(config, text);
    if (!why.empty()) return fail(std::string(primary_flag(rows[i])) + ": " + why);
  }
  fill_derived(config);
  if (std::string why = check_combinations(config); !why.empty()) {
    return fail((config.source_file.empty() ? std::string("command line") : config.source_file) +
                ": " + why);
  }
  if (print_config) return {std::nullopt, 0, to_toml(config)};
  return {std::move(config), 0, {}};
}

}  // namespace ringkv::conf
