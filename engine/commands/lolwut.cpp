// LOLWUT [VERSION v [args...]], as redis-server 7.0.15 answers it: without VERSION (or with any
// version but 5 and 6) the version line alone; VERSION 5 [cols [squares-per-row
// [squares-per-column]]] Schotter, VERSION 6 [cols [rows]] the skyline (lolwut_art.h), each
// signed with the version. A verbatim "txt" reply in RESP3, a bulk string in RESP2.
#include "engine/commands/lolwut.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/random.h"
#include "common/version.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/lolwut_art.h"

namespace ringkv::engine {
namespace {

int random_int() { return static_cast<int>(common::next_random() >> 33); }

// The version's arguments after VERSION v, each an integer (Redis's getLongFromObjectOrReply)
// clamped to [1, max]; false after replying the error of one that is not.
template <size_t N>
bool read_sizes(CommandContext& ctx, size_t first, const int64_t (&max)[N], int64_t (&out)[N]) {
  for (size_t i = 0; i < N && first + i < ctx.argv.size(); ++i) {
    if (!int64_or_reply(ctx, ctx.argv[first + i], out[i])) return false;
  }
  for (size_t i = 0; i < N; ++i) out[i] = std::clamp<int64_t>(out[i], 1, max[i]);
  return true;
}

void cmd_lolwut(CommandContext& ctx) {
  uint32_t version = 0;  // none asked: this server's own, which draws nothing
  size_t first = 1;
  if (ctx.argv.size() >= 3 && is(ctx.argv[1], "version")) {
    int64_t asked = 0;
    if (!int64_or_reply(ctx, ctx.argv[2], asked)) return;
    // Redis prints the number as an unsigned int and reads the major version back from it.
    version = static_cast<uint32_t>(asked);
    first = 3;
  }
  const lolwut::Rand rand = random_int;
  std::string text;
  if (version == 5) {
    int64_t sizes[3] = {66, 8, 12};
    if (!read_sizes(ctx, first, {1000, 200, 200}, sizes)) return;
    text = lolwut::render_braille(lolwut::schotter(
        static_cast<int>(sizes[0]), static_cast<int>(sizes[1]), static_cast<int>(sizes[2]), rand));
    text += "\nGeorg Nees - schotter, plotter on paper, 1968. ";
  } else if (version == 6) {
    int64_t sizes[2] = {80, 20};
    if (!read_sizes(ctx, first, {1000, 1000}, sizes)) return;
    text = lolwut::render_colors(
        lolwut::skyline(static_cast<int>(sizes[0]), static_cast<int>(sizes[1]), rand));
    text +=
        "\nDedicated to the 8 bit game developers of past and present.\n"
        "Original 8 bit image from Plaguemon by hikikomori. ";
  }
  text += "Redis ver. ";
  text += common::kRedisVersion;
  text += '\n';
  ctx.reply.verbatim(text);
}

constexpr CommandSpec kLolwutCommands[] = {
    {.name = "lolwut",
     .arity = -1,
     .flags = kReadonly | kFast,
     .handler = cmd_lolwut,
     .group = "server",
     .since = "5.0.0",
     .summary = "Display some computer art and the Redis version",
     .complexity = "",
     .syntax = "[VERSION=version<integer>]",
     .acl_categories = "read fast"},
};

}  // namespace

std::span<const CommandSpec> lolwut_commands() { return kLolwutCommands; }

}  // namespace ringkv::engine
