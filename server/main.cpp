// ringkv-server: parses the configuration, sets up logging and runs the server.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "conf/config.h"
#include "engine/command.h"
#include "server/server.h"

namespace {

// Sends logs to the configured file or stderr; returns false when the file cannot be opened.
bool setup_logging(const ringkv::conf::LogOptions& log) {
  try {
    std::shared_ptr<spdlog::logger> logger;
    if (log.file.empty()) {
      logger = spdlog::stderr_color_mt("ringkv");
    } else {
      logger = spdlog::basic_logger_mt("ringkv", log.file);
    }
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(log.level));
    return true;
  } catch (const spdlog::spdlog_ex& e) {
    std::cerr << "cannot open log file " << log.file << ": " << e.what() << "\n";
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ringkv::conf::ParseOutcome outcome = ringkv::conf::parse_command_line(argc, argv);
  if (!outcome.config) {
    std::fputs(outcome.message.c_str(), outcome.exit_code == 0 ? stdout : stderr);
    return outcome.exit_code;
  }
  const ringkv::conf::Config& config = *outcome.config;
  // The command names are known only here, where the command table is linked in.
  std::string rename_error = ringkv::engine::set_command_renames(config.security.rename_command);
  if (!rename_error.empty()) {
    std::fprintf(stderr, "%s: security.rename-command: %s\n",
                 config.source_file.empty() ? "configuration" : config.source_file.c_str(),
                 rename_error.c_str());
    return 2;
  }
  if (!setup_logging(config.log)) return 2;
  // A client closing its socket mid-write must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  ringkv::server::Server server(std::move(*outcome.config));
  return server.run();
}
