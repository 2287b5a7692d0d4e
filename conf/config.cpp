// Loading the TOML file, printing the effective configuration and CONFIG GET/SET, all by
// walking the parameter table.
#include "conf/config.h"

#include <fcntl.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/numbers.h"
#include "conf/params.h"

namespace ringkv::conf {
namespace {

using detail::Row;
using detail::rows;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const Row* find_row(std::string_view section, std::string_view key) {
  for (const Row& row : rows()) {
    if (row.section == section && row.key == key) return &row;
  }
  return nullptr;
}

const Row* find_redis_row(std::string_view name) {
  std::string wanted = lower(name);
  for (const Row& row : rows()) {
    if (!row.redis_name.empty() && row.redis_name == wanted) return &row;
  }
  return nullptr;
}

// The first key of `root` that names no row, as "<source>: section.key: reason"; "" if none.
std::string check_known_keys(const toml::table& root, std::string_view source) {
  const auto& names = detail::sections();
  for (const auto& [name, node] : root) {
    std::string section(name.str());
    if (std::find(names.begin(), names.end(), section) == names.end()) {
      return std::string(source) + ": " + section + ": unknown section";
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      return std::string(source) + ": " + section + ": expected a table ([" + section + "])";
    }
    for (const auto& [key, value] : *table) {
      if (find_row(section, key.str()) == nullptr) {
        return std::string(source) + ": " + section + "." + std::string(key.str()) +
               ": unknown key";
      }
    }
  }
  return {};
}

std::string set_failed(std::string_view name, std::string_view reason) {
  return "ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " +
         std::string(reason);
}

}  // namespace

std::string load_string(std::string_view toml_text, std::string_view source_name, Config& config) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    return std::string(source_name) + ": line " + std::to_string(e.source().begin.line) +
           ", column " + std::to_string(e.source().begin.column) + ": " +
           std::string(e.description());
  }
  if (std::string error = check_known_keys(root, source_name); !error.empty()) return error;
  // Apply to a copy so a rejected file leaves the caller's config as it was.
  Config next = config;
  for (const Row& row : rows()) {
    const toml::table* table = root[row.section].as_table();
    const toml::node* node = table == nullptr ? nullptr : table->get(row.key);
    if (node == nullptr) continue;
    detail::Reason why = row.from_toml(next, *node);
    if (!why.empty()) {
      return std::string(source_name) + ": " + std::string(row.section) + "." +
             std::string(row.key) + (why.front() == '[' || why.front() == '.' ? "" : ": ") + why;
    }
  }
  config = std::move(next);
  return {};
}

std::string load_file(const std::string& path, Config& config) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return path + ": cannot read file: " + std::strerror(errno);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) text.append(buf, n);
  bool failed = std::ferror(file) != 0;
  int read_errno = errno;
  std::fclose(file);
  if (failed) return path + ": cannot read file: " + std::strerror(read_errno);
  std::string error = load_string(text, path, config);
  if (error.empty()) config.source_file = path;
  return error;
}

void fill_derived(Config& config) {
  config.cluster.self_given = !config.cluster.self.empty();
  if (config.cluster.self.empty()) {
    const std::string& bind = config.server.bind;
    bool ipv6 = bind.find(':') != std::string::npos;
    // With tls-cluster, peers reach each other on their TLS ports.
    const int port = config.tls.cluster ? config.server.tls_port : config.server.port;
    config.cluster.self = (ipv6 ? "[" + bind + "]" : bind) + ":" + std::to_string(port);
  }
}

std::string check_combinations(const Config& config) {
  const ClusterOptions& c = config.cluster;
  if (c.replica_acks > c.replication_factor - 1) {
    return "cluster.replica-acks: " + std::to_string(c.replica_acks) +
           " is more than the replicas a key has (replication-factor " +
           std::to_string(c.replication_factor) + " gives " +
           std::to_string(c.replication_factor - 1) + ")";
  }
  return {};
}

std::string to_toml(const Config& config) {
  std::string out = "# ringkv-server " RINGKV_VERSION " configuration\n";
  for (std::string_view section : detail::sections()) {
    std::string body;
    for (const Row& row : rows()) {
      if (row.section != section) continue;
      body += "# " + std::string(row.description) + "\n";
      body += std::string(row.key) + " = " + row.to_toml(config) + "\n";
    }
    if (!body.empty()) out += "\n[" + std::string(section) + "]\n" + body;
  }
  return out;
}

std::string rewrite_file(const Config& config, const std::string& path) {
  auto failed = [](const std::string& what) {
    return "ERR Rewriting config file: " + what + ": " + std::strerror(errno);
  };
  // The comment block at the top of the file is the operator's: kept, except the line
  // to_toml writes itself (so rewriting twice gives the same file).
  const std::string body = to_toml(config);
  const std::string own_header = body.substr(0, body.find('\n') + 1);
  std::string header;
  if (FILE* in = std::fopen(path.c_str(), "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, in) != nullptr && line[0] == '#') {
      if (own_header != line) header += line;
    }
    std::fclose(in);
  }
  const std::string text = header + body;
  const std::string temp = path + ".rewrite-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failed(temp);
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!written || ::fsync(fd) != 0) {
    const std::string error = failed(temp);
    ::close(fd);
    ::unlink(temp.c_str());
    return error;
  }
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string error = failed(path);
    ::unlink(temp.c_str());
    return error;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return {};
}

std::span<const Parameter> parameters() {
  static const std::vector<Parameter> kParameters = [] {
    std::vector<Parameter> out;
    for (const Row& row : rows()) {
      if (row.redis_name.empty()) continue;
      out.push_back(Parameter{row.redis_name, row.description, row.runtime, row.to_text});
    }
    return out;
  }();
  return kParameters;
}

const Parameter* find_parameter(std::string_view name) {
  std::string wanted = lower(name);
  for (const Parameter& p : parameters()) {
    if (p.name == wanted) return &p;
  }
  return nullptr;
}

std::string set_parameter(Config& config, std::string_view name, std::string_view value) {
  std::pair<std::string_view, std::string_view> pair{name, value};
  return set_parameters(config, std::span(&pair, 1));
}

std::string set_parameters(Config& config,
                           std::span<const std::pair<std::string_view, std::string_view>> pairs) {
  // Redis names the argument as the client spelled it when the name itself is refused, and by
  // its canonical name when the value is.
  std::vector<const Row*> chosen;
  for (const auto& [name, value] : pairs) {
    const Row* row = find_redis_row(name);
    if (row == nullptr) {
      return "ERR Unknown option or number of arguments for CONFIG SET - '" + std::string(name) +
             "'";
    }
    if (row->immutable_in_redis) return set_failed(name, "can't set immutable config");
    if (row->protected_in_redis) return set_failed(name, "can't set protected config");
    if (std::find(chosen.begin(), chosen.end(), row) != chosen.end()) {
      return set_failed(name, "duplicate parameter");
    }
    chosen.push_back(row);
  }
  Config next = config;
  for (size_t i = 0; i < pairs.size(); ++i) {
    detail::Reason why = chosen[i]->from_redis(next, pairs[i].second);
    if (!why.empty()) return set_failed(chosen[i]->redis_name, why);
  }
  // Validated first, so an invalid port gets the same range error as from Redis, which can
  // rebind at run time; ringkv's address is its identity on the ring and stays fixed.
  for (const Row* row : chosen) {
    if (!row->runtime) return set_failed(row->redis_name, "can't set immutable config");
  }
  config = std::move(next);
  return {};
}

bool parse_save_rules(std::string_view text, std::vector<std::pair<int64_t, int64_t>>& rules) {
  rules.clear();
  if (text.empty()) return true;
  std::vector<int64_t> numbers;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    auto v = common::parse_integer(text.substr(start, end - start));
    if (!v || *v < 0) return false;
    numbers.push_back(*v);
    start = end + 1;
  }
  if (numbers.size() % 2 != 0) return false;
  for (size_t i = 0; i < numbers.size(); i += 2) rules.emplace_back(numbers[i], numbers[i + 1]);
  return true;
}

}  // namespace ringkv::conf
