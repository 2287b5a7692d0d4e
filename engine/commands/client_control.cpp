// Client controls: CLIENT REPLY, PAUSE/UNPAUSE, NO-EVICT, UNBLOCK, TRACKING, CACHING, GETREDIR,
// TRACKINGINFO and HELP, with Redis 7.0.15's replies and error texts.
#include "engine/commands/client_control.h"

#include <algorithm>
#include <limits>

#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace {

constexpr std::string_view kClientHelp[] = {
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "HELP",
    "    Prints this help.",
};

// Redis's stringCheckPrefix: two prefixes overlap when one starts with the other.
bool prefixes_overlap(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

// Redis's checkPrefixCollisionsOrReply: a new prefix may overlap neither the client's prefixes
// nor another new one.
bool prefixes_collide(CommandContext& ctx, const ClientTracking& t,
                      const std::vector<std::string_view>& prefixes) {
  for (size_t i = 0; i < prefixes.size(); ++i) {
    for (const std::string& existing : t.prefixes) {
      if (prefixes_overlap(existing, prefixes[i])) {
        ctx.reply.error("ERR Prefix '" + std::string(prefixes[i]) +
                        "' overlaps with an existing prefix '" + existing +
                        "'. Prefixes for a single client must not overlap.");
        return true;
      }
    }
    for (size_t j = i + 1; j < prefixes.size(); ++j) {
      if (prefixes_overlap(prefixes[i], prefixes[j])) {
        ctx.reply.error("ERR Prefix '" + std::string(prefixes[i]) +
                        "' overlaps with another provided prefix '" + std::string(prefixes[j]) +
                        "'. Prefixes for a single client must not overlap.");
        return true;
      }
    }
  }
  return false;
}

}  // namespace

void cmd_client_reply(CommandContext& ctx) {
  using Mode = ClientSession::ReplyMode;
  if (equals_ignore_case(ctx.argv[2], "on")) {
    // ON's own reply is sent even when replies were off.
    ctx.client->set_reply_mode(Mode::kOn);
    ctx.reply.ok();
  } else if (equals_ignore_case(ctx.argv[2], "off")) {
    ctx.client->set_reply_mode(Mode::kOff);
  } else if (equals_ignore_case(ctx.argv[2], "skip")) {
    ctx.client->set_reply_mode(Mode::kSkip);
  } else {
    ctx.reply.error(protocol::err::kSyntax);
  }
}

void cmd_client_pause(CommandContext& ctx) {
  bool all = true;
  if (ctx.argv.size() == 4) {
    if (equals_ignore_case(ctx.argv[3], "write")) {
      all = false;
    } else if (!equals_ignore_case(ctx.argv[3], "all")) {
      ctx.reply.error("ERR CLIENT PAUSE mode must be WRITE or ALL");
      return;
    }
  } else if (ctx.argv.size() != 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  // Redis's getTimeoutFromObjectOrReply in milliseconds.
  int64_t timeout = 0;
  if (!parse_int64(ctx.argv[2], timeout)) {
    ctx.reply.error("ERR timeout is not an integer or out of range");
    return;
  }
  if (timeout < 0) {
    ctx.reply.error("ERR timeout is negative");
    return;
  }
  const int64_t now = ctx.store.now();
  const int64_t until = timeout > std::numeric_limits<int64_t>::max() - now
                            ? std::numeric_limits<int64_t>::max()
                            : now + timeout;
  ctx.server->pause_clients(until, all);
  ctx.reply.ok();
}

void cmd_client_unpause(CommandContext& ctx) {
  ctx.server->unpause_clients();
  ctx.reply.ok();
}

void cmd_client_no_evict(CommandContext& ctx) {
  if (equals_ignore_case(ctx.argv[2], "on")) {
    ctx.client->set_no_evict(true);
  } else if (equals_ignore_case(ctx.argv[2], "off")) {
    ctx.client->set_no_evict(false);
  } else {
    ctx.reply.error(protocol::err::kSyntax);
    return;
  }
  ctx.reply.ok();
}

void cmd_client_unblock(CommandContext& ctx) {
  int64_t id = 0;
  if (!parse_int64(ctx.argv[2], id)) {
    ctx.reply.error(protocol::err::kNotInteger);
    return;
  }
  bool error = false;
  if (ctx.argv.size() == 4) {
    if (equals_ignore_case(ctx.argv[3], "error")) {
      error = true;
    } else if (!equals_ignore_case(ctx.argv[3], "timeout")) {
      ctx.reply.error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
      return;
    }
  } else if (ctx.argv.size() != 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  const bool unblocked = id > 0 && ctx.server->unblock_client(static_cast<uint64_t>(id), error);
  ctx.reply.integer(unblocked ? 1 : 0);
}

void cmd_client_tracking(CommandContext& ctx) {
  ClientTracking* t = ctx.client->tracking();
  if (t == nullptr) {
    ctx.reply.error(protocol::err::kSyntax);
    return;
  }
  // Options first, in order, as Redis parses them.
  int64_t redirect = 0;
  bool bcast = false, optin = false, optout = false, noloop = false;
  std::vector<std::string_view> prefixes;
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    const bool more = j + 1 < ctx.argv.size();
    std::string_view opt = ctx.argv[j];
    if (equals_ignore_case(opt, "redirect") && more) {
      ++j;
      if (redirect != 0) {
        ctx.reply.error("ERR A client can only redirect to a single other client");
        return;
      }
      if (!parse_int64(ctx.argv[j], redirect)) {
        ctx.reply.error(protocol::err::kNotInteger);
        return;
      }
      if (redirect < 1 || !ctx.server->client_exists(static_cast<uint64_t>(redirect))) {
        ctx.reply.error("ERR The client ID you want redirect to does not exist");
        return;
      }
    } else if (equals_ignore_case(opt, "bcast")) {
      bcast = true;
    } else if (equals_ignore_case(opt, "optin")) {
      optin = true;
    } else if (equals_ignore_case(opt, "optout")) {
      optout = true;
    } else if (equals_ignore_case(opt, "noloop")) {
      noloop = true;
    } else if (equals_ignore_case(opt, "prefix") && more) {
      prefixes.push_back(ctx.argv[++j]);
    } else {
      ctx.reply.error(protocol::err::kSyntax);
      return;
    }
  }
  if (equals_ignore_case(ctx.argv[2], "on")) {
    if (!bcast && !prefixes.empty()) {
      ctx.reply.error("ERR PREFIX option requires BCAST mode to be enabled");
      return;
    }
    if (t->on && t->bcast != bcast) {
      ctx.reply.error(
          "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
          "and then re-enabling it with a different mode.");
      return;
    }
    if (bcast && (optin || optout)) {
      ctx.reply.error("ERR OPTIN and OPTOUT are not compatible with BCAST");
      return;
    }
    if (optin && optout) {
      ctx.reply.error("ERR You can't specify both OPTIN mode and OPTOUT mode");
      return;
    }
    if ((optin && t->optout) || (optout && t->optin)) {
      ctx.reply.error(
          "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
          "and then re-enabling it with a different mode.");
      return;
    }
    if (bcast && prefixes_collide(ctx, *t, prefixes)) return;
    // Redis's enableTracking: the mode flags are set anew, prefixes are added.
    t->on = true;
    t->broken_redirect = false;
    t->redirect = static_cast<uint64_t>(redirect);
    t->bcast = bcast;
    t->optin = optin;
    t->optout = optout;
    t->noloop = noloop;
    if (bcast) {
      // BCAST without a prefix tracks every key: the empty prefix.
      if (prefixes.empty()) prefixes.emplace_back();
      std::vector<std::string> added;
      for (std::string_view p : prefixes) {
        bool known = false;
        for (const std::string& existing : t->prefixes) known = known || existing == p;
        if (!known) added.emplace_back(p);
      }
      t->prefixes.insert(t->prefixes.end(), added.begin(), added.end());
      // TRACKINGINFO lists them sorted, as Redis's radix tree holds them.
      std::sort(t->prefixes.begin(), t->prefixes.end());
      ctx.server->track_prefixes(ctx.client->id(), added, true);
    }
  } else if (equals_ignore_case(ctx.argv[2], "off")) {
    if (!t->prefixes.empty()) ctx.server->track_prefixes(ctx.client->id(), t->prefixes, false);
    *t = ClientTracking{};
  } else {
    ctx.reply.error(protocol::err::kSyntax);
    return;
  }
  ctx.reply.ok();
}

void cmd_client_caching(CommandContext& ctx) {
  ClientTracking* t = ctx.client->tracking();
  if (t == nullptr || !t->on || !(t->optin || t->optout)) {
    ctx.reply.error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
        "OPTOUT mode enabled");
    return;
  }
  if (equals_ignore_case(ctx.argv[2], "yes")) {
    if (!t->optin) {
      ctx.reply.error(
          "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
      return;
    }
  } else if (equals_ignore_case(ctx.argv[2], "no")) {
    if (!t->optout) {
      ctx.reply.error(
          "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
      return;
    }
  } else {
    ctx.reply.error(protocol::err::kSyntax);
    return;
  }
  t->caching = true;
  ctx.reply.ok();
}

void cmd_client_getredir(CommandContext& ctx) {
  const ClientTracking* t = ctx.client->tracking();
  ctx.reply.integer(t != nullptr && t->on ? static_cast<int64_t>(t->redirect) : -1);
}

void cmd_client_trackinginfo(CommandContext& ctx) {
  static const ClientTracking kOff;
  const ClientTracking* found = ctx.client->tracking();
  const ClientTracking& t = found != nullptr ? *found : kOff;
  ctx.reply.map(3);
  ctx.reply.bulk("flags");
  std::vector<std::string_view> flags;
  if (!t.on) {
    flags.push_back("off");
  } else {
    flags.push_back("on");
    if (t.bcast) flags.push_back("bcast");
    if (t.optin) {
      flags.push_back("optin");
      if (t.caching) flags.push_back("caching-yes");
    }
    if (t.optout) {
      flags.push_back("optout");
      if (t.caching) flags.push_back("caching-no");
    }
    if (t.noloop) flags.push_back("noloop");
    if (t.broken_redirect) flags.push_back("broken_redirect");
  }
  ctx.reply.set(flags.size());
  for (std::string_view f : flags) ctx.reply.bulk(f);
  ctx.reply.bulk("redirect");
  ctx.reply.integer(t.on ? static_cast<int64_t>(t.redirect) : -1);
  ctx.reply.bulk("prefixes");
  ctx.reply.array(t.prefixes.size());
  for (const std::string& p : t.prefixes) ctx.reply.bulk(p);
}

void cmd_client_help(CommandContext& ctx) { reply_help(ctx.reply, kClientHelp); }

}  // namespace ringkv::engine
