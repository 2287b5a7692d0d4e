// CLUSTER IMPORT's command and the server's side of imports: starting, stopping, recording them
// in `dir` and resuming them when the node starts (import.h, import_state.h).
#include <spdlog/spdlog.h>

#include "cluster/cluster.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// Between members: RINGKV.IMPORT <node> <CLUSTER INFO fields of one source>, once a second, and
// RINGKV.IMPORT STOP <source> (empty: every source).

}  // namespace

bool Server::cluster_import(engine::CommandContext& ctx) {
  if (!cluster_) return false;
  const auto args = ctx.argv.subspan(2);
  if (engine::equals_ignore_case(args[0], "stop")) {
    if (args.size() > 2) {
      ctx.reply.error(protocol::err::kSyntax);
      return true;
    }
    size_t stopped = 0;
    for (auto& source : imports_) {
      if (source->state() == ImportSource::State::kStopped) continue;
      if (args.size() == 2 && source->address() != args[1]) continue;
      source->stop();
      stopped++;
    }
    // An import another member runs (or ran until it went down) is stopped there.
    if (stop_remote_import(args.size() == 2 ? args[1] : std::string_view())) stopped++;
    announce_imports();
    if (stopped == 0) {
      ctx.reply.error(args.size() == 2 ? "ERR no import from " + std::string(args[1]) + " runs"
                                       : std::string("ERR no import runs"));
    } else {
      ctx.reply.ok();
    }
    return true;
  }
  std::string password;
  if (args.size() == 3 && engine::equals_ignore_case(args[1], "auth")) {
    password = args[2];
  } else if (args.size() != 1) {
    ctx.reply.error(protocol::err::kSyntax);
    return true;
  }
  const std::string_view address = args[0];
  const size_t colon = address.rfind(':');
  int64_t port = 0;
  if (colon == std::string_view::npos || colon == 0 ||
      !engine::parse_int64(address.substr(colon + 1), port) || port < 1 || port > 65535) {
    ctx.reply.error("ERR invalid address '" + std::string(address) + "': expected host:port");
    return true;
  }
  for (const auto& [id, remote] : remote_imports_) {
    if (id.substr(remote.node.size() + 1) != address ||
        remote.fields.find(",state=stopped,") != std::string::npos || remote.stop_requested) {
      continue;
    }
    ctx.reply.error("ERR already importing from " + std::string(address) + " (on " + remote.node +
                    ")");
    return true;
  }
  for (auto& source : imports_) {
    if (source->address() != address) continue;
    if (source->state() != ImportSource::State::kStopped) {
      ctx.reply.error("ERR already importing from " + std::string(address));
      return true;
    }
    spdlog::info("importing from {} again", address);
    source->restart(std::move(password));
    announce_imports();
    ctx.reply.ok();
    return true;
  }
  imports_.push_back(std::make_unique<ImportSource>(*this, std::string(address.substr(0, colon)),
                                                    static_cast<int>(port), std::move(password),
                                                    clients_.next_id()));
  spdlog::info("importing from {}", address);
  imports_.back()->start();
  announce_imports();
  ctx.reply.ok();
  return true;
}

void Server::save_imports() {
  // Not once the node shuts down: the imports it stopped then resume at the next start.
  if (shutting_down_) return;
  std::vector<ImportRecord> records;
  for (auto& source : imports_) records.push_back(source->record());
  // Once a second from cron: rewritten (and fsynced) only when something changed.
  if (records == saved_imports_) return;
  const std::string error = write_import_state(import_state_path(config_.persistence.dir), records);
  if (error.empty()) {
    saved_imports_ = std::move(records);
  } else {
    spdlog::warn("recording the imports failed: {}", error);
  }
}

void Server::load_imports() {
  std::string error;
  std::vector<ImportRecord> records =
      read_import_state(import_state_path(config_.persistence.dir), error);
  if (!error.empty()) {
    spdlog::warn("{}: the imports recorded there are not resumed", error);
    return;
  }
  for (const ImportRecord& r : records) {
    const size_t colon = r.source.rfind(':');
    int64_t port = 0;
    if (colon == std::string::npos || !engine::parse_int64(r.source.substr(colon + 1), port)) {
      continue;
    }
    imports_.push_back(std::make_unique<ImportSource>(
        *this, r.source.substr(0, colon), static_cast<int>(port), r.password, clients_.next_id()));
    imports_.back()->resume(r);
  }
  if (!imports_.empty()) announce_imports();
}

void Server::import_cron(uint64_t now) {
  if (imports_.empty() || now - last_import_cron_ms_ < 1000) return;
  last_import_cron_ms_ = now;
  for (auto& source : imports_) source->cron(now);
  save_imports();
  announce_imports();
}

void Server::announce_imports() {
  // Once a second, and when an import starts, stops or resumes, to every member: where each stands,
  // so that CLUSTER INFO anywhere shows it (and where it stopped, if this node dies) and CLUSTER
  // IMPORT STOP works anywhere.
  const std::string& self = cluster_->self_address();
  const uint64_t now = uv_now(loop_);
  for (const auto& node : cluster_->ring().nodes()) {
    if (node.address == self) continue;
    for (auto& source : imports_) {
      const std::string fields = source->info_fields(now);
      const std::string_view argv[] = {cluster::kImportFrame, self, fields};
      cluster_->send_frame(node.address, argv);
    }
  }
}

void Server::import_frame(std::span<const std::string_view> args, protocol::ReplyWriter& writer) {
  // RINGKV.IMPORT <node> <fields>: a member's import; RINGKV.IMPORT STOP <source or "">: stop it.
  if (args.size() == 2 && engine::equals_ignore_case(args[0], "stop")) {
    for (auto& source : imports_) {
      if (source->state() == ImportSource::State::kStopped) continue;
      if (!args[1].empty() && source->address() != args[1]) continue;
      spdlog::info("import from {} stopped by CLUSTER IMPORT STOP on another member",
                   source->address());
      source->stop();
    }
    writer.ok();
    return;
  }
  if (args.size() != 2 || args[1].rfind("source=", 0) != 0) {
    writer.error(protocol::err::kSyntax);
    return;
  }
  const std::string_view fields = args[1];
  const std::string_view source = fields.substr(7, fields.find(',') - 7);
  const std::string id = std::string(args[0]) + " " + std::string(source);
  RemoteImport& r = remote_imports_[id];
  r.node = args[0];
  r.fields = fields;
  r.heard_ms = uv_now(loop_);
  if (r.stop_requested) {
    // A STOP given while the node was away: passed on now that it is back.
    if (fields.find(",state=stopped,") != std::string_view::npos) {
      r.stop_requested = false;
    } else {
      const std::string_view stop[] = {cluster::kImportFrame, "STOP", source};
      cluster_->send_frame(r.node, stop);
    }
  }
  writer.ok();
}

bool Server::stop_remote_import(std::string_view source) {
  bool found = false;
  for (auto& [id, r] : remote_imports_) {
    const std::string_view src = std::string_view(id).substr(r.node.size() + 1);
    if (!source.empty() && src != source) continue;
    if (r.fields.find(",state=stopped,") != std::string::npos) continue;
    // If the node is down it gets the STOP when it announces itself again.
    r.stop_requested = true;
    const std::string_view stop[] = {cluster::kImportFrame, "STOP", src};
    cluster_->send_frame(r.node, stop);
    found = true;
  }
  return found;
}

void Server::run_routed(uint64_t client_id, std::span<const std::string_view> argv,
                        std::function<void(std::string_view reply)> done) {
  std::string error;
  const engine::CommandSpec* spec = engine::resolve_command(argv, error);
  if (spec == nullptr) {
    done("-" + error + "\r\n");
    return;
  }
  if (cluster_) {
    const cluster::Route route = cluster_->router().route(*spec, argv);
    if (route.kind != cluster::RouteKind::kLocal) {
      dbs_.set_now(unix_now_ms());
      cluster_->execute(route, *spec, argv, client_id, protocol::RespVersion::kResp2, 0,
                        std::move(done));
      return;
    }
  }
  std::string reply;
  protocol::ReplyWriter writer(reply);
  run(Origin::part(), *spec, argv, writer);
  done(reply);
}

}  // namespace ringkv::server
