// ringkv-server: parses the configuration, sets up logging and runs the server.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
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

// Descriptors kept beside the clients' (listener, peer links, logs, ...), as Redis reserves.
constexpr rlim_t kReservedFds = 32;

// Raises the soft open-files limit to fit `maxclients` clients, as Redis does at start-up: up to
// the hard limit, beyond it when privileged. When the system allows less, maxclients shrinks to
// what fits. Logs what it got.
void adjust_open_files_limit(int64_t& maxclients) {
  const rlim_t wanted = static_cast<rlim_t>(maxclients) + kReservedFds;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    spdlog::warn("Unable to obtain the current NOFILE limit ({}), assuming 1024",
                 std::strerror(errno));
    maxclients = std::min<int64_t>(maxclients, 1024 - static_cast<int64_t>(kReservedFds));
    return;
  }
  const rlim_t original = limit.rlim_cur;
  if (original >= wanted) return;
  rlim_t got = original;
  // Within the hard limit any process may raise its soft limit; beyond it only a privileged one.
  rlimit raised{wanted, std::max(limit.rlim_max, wanted)};
  if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
    got = wanted;
  } else if (limit.rlim_max > original) {
    raised = {limit.rlim_max, limit.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) got = limit.rlim_max;
  }
  if (got >= wanted) {
    spdlog::info("Increased maximum number of open files to {} (it was originally set to {}).", got,
                 original);
    return;
  }
  const int64_t fits = static_cast<int64_t>(got) - static_cast<int64_t>(kReservedFds);
  spdlog::warn(
      "You requested maxclients of {} requiring at least {} max file descriptors. Current maximum "
      "open files is {}. maxclients has been reduced to {} to compensate for low ulimit. If you "
      "need higher maxclients increase 'ulimit -n'.",
      maxclients, wanted, got, std::max<int64_t>(fits, 1));
  maxclients = std::max<int64_t>(fits, 1);
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
  adjust_open_files_limit(outcome.config->server.maxclients);
  ringkv::server::Server server(std::move(*outcome.config));
  return server.serve();
}
