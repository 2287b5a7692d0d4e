// Loading, printing and changing the configuration: the TOML file, the command line, the
// effective config as TOML (--print-config) and CONFIG GET/SET. Everything here is driven by
// one parameter table (params.cpp), so a key is a file key, a flag and a CONFIG parameter at once.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "conf/options.h"

#ifndef RINGKV_VERSION
#define RINGKV_VERSION "0.1.0"
#endif

namespace ringkv::conf {

// What the command line asks for: start the server with `config`, or exit with `exit_code`
// after printing `message` (to stdout when exit_code is 0: --help, --version, --print-config;
// to stderr otherwise, and then exit_code is 2).
struct ParseOutcome {
  std::optional<Config> config;
  int exit_code = 0;
  std::string message;
};

// Parses `ringkv-server [--config FILE] [flags] [--help] [--version] [--print-config]`:
// defaults, then the file, then the flags (flags win), then derived values (cluster.self).
ParseOutcome parse_command_line(int argc, const char* const* argv);

// Loads a TOML file over `config` and records its path in config.source_file. Returns an empty
// string on success, else one message naming the file, the key and the reason, e.g.
// "ringkv.toml: server.port: must be between 1 and 65535, got 70000". Every key is validated
// before any is applied, so on failure `config` is unchanged.
std::string load_file(const std::string& path, Config& config);

// Same as load_file for TOML text already in memory; `source_name` stands for the file name in
// messages. Does not touch config.source_file.
std::string load_string(std::string_view toml_text, std::string_view source_name, Config& config);

// Fills values that default to others: an empty cluster.self becomes "bind:port" (bind:tls-port
// with tls-cluster).
void fill_derived(Config& config);
// Checks the parameters that limit each other (replica-acks against replication-factor); returns
// "" or "section.key: reason".
std::string check_combinations(const Config& config);

// The configuration as TOML with a comment per key; load_string of it yields the same Config.
std::string to_toml(const Config& config);

// CONFIG REWRITE: replaces the file `path` with the effective configuration (to_toml), keeping
// the comment lines the file starts with, atomically (a temporary file, fsynced, renamed over
// it, then the directory fsynced): a crash leaves the old file or the new one. Returns an empty
// string, or Redis's error text ("ERR Rewriting config file: <reason>").
std::string rewrite_file(const Config& config, const std::string& path);

// One parameter CONFIG GET/SET knows, named as Redis names it.
struct Parameter {
  std::string_view name;         // "proto-max-bulk-len"
  std::string_view description;  // one line, for humans
  bool runtime;                  // CONFIG SET may change it while the server runs
  // The current value exactly as Redis's CONFIG GET prints it (sizes as plain byte counts).
  std::function<std::string(const Config&)> get;
};

// Every parameter CONFIG GET/SET knows, in table order.
std::span<const Parameter> parameters();

// The parameter called `name` (case-insensitive, as in Redis), or nullptr.
const Parameter* find_parameter(std::string_view name);

// CONFIG SET of one parameter. Returns an empty string on success, else Redis's error text
// without the leading '-', e.g. "ERR CONFIG SET failed (possibly related to argument 'port') -
// argument must be between 1 and 65535 inclusive". A valid value for a parameter that cannot
// change at run time (bind, port, logfile) fails with "can't set immutable config". On failure
// `config` is unchanged.
std::string set_parameter(Config& config, std::string_view name, std::string_view value);

// CONFIG SET of several name/value pairs, all or nothing, with Redis's checks for unknown and
// duplicate names. Returns an empty string on success, else Redis's error text.
std::string set_parameters(Config& config,
                           std::span<const std::pair<std::string_view, std::string_view>> pairs);

}  // namespace ringkv::conf
