// txn_load: a closed-loop load generator for request batches such as MULTI ... EXEC, which
// redis-benchmark cannot send. Each client connection sends its batch (all commands at once,
// pipelined), waits for every reply, and sends it again; the batch's latency is from the first
// byte sent to the last reply read. Single-threaded (epoll), so it needs one core at most.
//
//   txn_load PORT SECONDS WARMUP_SECONDS SCRIPT_FILE
//
// SCRIPT_FILE has one line per client connection: its batch, commands separated by " | ", the
// words of a command by single spaces. Prints "batches=N seconds=S rps=R p50_ms=A p99_ms=B
// errors=E" (rps in batches per second; errors: error replies seen, first one on stderr).
// Built by bench/bench_transactions.py (g++ -O2 -std=c++20).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::string encode(const std::vector<std::string>& words) {
  std::string out = "*" + std::to_string(words.size()) + "\r\n";
  for (const std::string& w : words) out += "$" + std::to_string(w.size()) + "\r\n" + w + "\r\n";
  return out;
}

// Length of the complete RESP value at the start of `in`, or 0 if it is incomplete.
size_t scan(const char* in, size_t n, bool& error) {
  size_t pos = 0;
  std::vector<long> open{1};
  while (!open.empty()) {
    const char* eol = static_cast<const char*>(memmem(in + pos, n - pos, "\r\n", 2));
    if (eol == nullptr) return 0;
    const char type = in[pos];
    const long value = std::strtol(in + pos + 1, nullptr, 10);
    if (open.size() == 1 && type == '-') error = true;
    pos = static_cast<size_t>(eol - in) + 2;
    if (type == '$' && value >= 0) {
      if (n - pos < static_cast<size_t>(value) + 2) return 0;
      pos += static_cast<size_t>(value) + 2;
    }
    open.back()--;
    if ((type == '*' || type == '%' || type == '~') && value > 0) {
      open.push_back(type == '%' ? 2 * value : value);
    }
    while (!open.empty() && open.back() == 0) open.pop_back();
  }
  return pos;
}

struct Client {
  int fd = -1;
  std::string batch;
  size_t commands = 0;
  std::string in;
  size_t replies = 0;
  Clock::time_point sent;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: txn_load PORT SECONDS WARMUP_SECONDS SCRIPT_FILE\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const double seconds = std::atof(argv[2]);
  const double warmup = std::atof(argv[3]);
  std::ifstream script(argv[4]);
  std::vector<Client> clients;
  for (std::string line; std::getline(script, line);) {
    if (line.empty()) continue;
    Client c;
    size_t start = 0;
    while (start <= line.size()) {
      size_t bar = line.find(" | ", start);
      if (bar == std::string::npos) bar = line.size();
      std::istringstream words(line.substr(start, bar - start));
      std::vector<std::string> command;
      for (std::string w; words >> w;) command.push_back(w);
      c.batch += encode(command);
      c.commands++;
      start = bar + 3;
    }
    clients.push_back(std::move(c));
  }
  const int ep = epoll_create1(0);
  for (size_t i = 0; i < clients.size(); ++i) {
    Client& c = clients[i];
    c.fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      std::perror("connect");
      return 1;
    }
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
  }
  const Clock::time_point begin = Clock::now();
  const Clock::time_point measure_from =
      begin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup));
  const Clock::time_point end = measure_from + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(seconds));
  auto send_batch = [](Client& c) {
    c.sent = Clock::now();
    c.replies = 0;
    size_t off = 0;
    while (off < c.batch.size()) {
      const ssize_t n = write(c.fd, c.batch.data() + off, c.batch.size() - off);
      if (n <= 0) {
        std::perror("write");
        std::exit(1);
      }
      off += static_cast<size_t>(n);
    }
  };
  for (Client& c : clients) send_batch(c);
  std::vector<double> latencies;
  size_t errors = 0;
  bool error_shown = false;
  std::vector<epoll_event> events(clients.size());
  char buf[65536];
  while (Clock::now() < end) {
    const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    for (int e = 0; e < n; ++e) {
      Client& c = clients[events[e].data.u64];
      const ssize_t got = read(c.fd, buf, sizeof(buf));
      if (got <= 0) {
        std::fprintf(stderr, "connection closed by the server\n");
        return 1;
      }
      c.in.append(buf, static_cast<size_t>(got));
      size_t used = 0;
      for (;;) {
        bool error = false;
        const size_t len = scan(c.in.data() + used, c.in.size() - used, error);
        if (len == 0) break;
        if (error) {
          errors++;
          if (!error_shown) {
            std::fprintf(stderr, "error reply: %.*s", static_cast<int>(len), c.in.data() + used);
            error_shown = true;
          }
        }
        used += len;
        if (++c.replies < c.commands) continue;
        const Clock::time_point now = Clock::now();
        if (c.sent >= measure_from && now < end) {
          latencies.push_back(std::chrono::duration<double, std::milli>(now - c.sent).count());
        }
        send_batch(c);
      }
      c.in.erase(0, used);
    }
  }
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) {
    return latencies.empty() ? 0.0
                             : latencies[std::min(latencies.size() - 1,
                                                  static_cast<size_t>(p * latencies.size()))];
  };
  std::printf("batches=%zu seconds=%.2f rps=%.0f p50_ms=%.3f p99_ms=%.3f errors=%zu\n",
              latencies.size(), seconds, static_cast<double>(latencies.size()) / seconds, pct(0.50),
              pct(0.99), errors);
  return 0;
}
