// LOLWUT's canvas and drawings (see lolwut_art.h), with redis-server 7.0.15's arithmetic: the
// same float and double steps, so the squares that are not turned land on the same pixels.
#include "engine/commands/lolwut_art.h"

#include <cmath>
#include <cstdlib>
#include <numbers>

namespace ringkv::engine::lolwut {

Canvas::Canvas(int width, int height, int background)
    : width_(width),
      height_(height),
      pixels_(static_cast<size_t>(width) * static_cast<size_t>(height),
              static_cast<uint8_t>(background)) {}

void Canvas::set(int x, int y, int color) {
  if (x < 0 || x >= width_ || y < 0 || y >= height_) return;
  pixels_[static_cast<size_t>(x) + static_cast<size_t>(y) * static_cast<size_t>(width_)] =
      static_cast<uint8_t>(color);
}

int Canvas::get(int x, int y) const {
  if (x < 0 || x >= width_ || y < 0 || y >= height_) return 0;
  return pixels_[static_cast<size_t>(x) + static_cast<size_t>(y) * static_cast<size_t>(width_)];
}

void Canvas::line(int x1, int y1, int x2, int y2, int color) {
  const int dx = std::abs(x2 - x1);
  const int dy = std::abs(y2 - y1);
  const int sx = x1 < x2 ? 1 : -1;
  const int sy = y1 < y2 ? 1 : -1;
  int err = dx - dy;
  for (;;) {
    set(x1, y1, color);
    if (x1 == x2 && y1 == y2) break;
    const int e2 = err * 2;
    if (e2 > -dy) {
      err -= dy;
      x1 += sx;
    }
    if (e2 < dx) {
      err += dx;
      y1 += sy;
    }
  }
}

void Canvas::square(int x, int y, float size, float angle, int color) {
  // The corners lie on a circle: a side of `size` is a radius of size / √2. Each step is done
  // in the type Redis's C does it in (float variables, double arithmetic).
  size = static_cast<float>(static_cast<double>(size) / 1.4142135623);
  size = static_cast<float>(std::round(static_cast<double>(size)));
  float k = static_cast<float>(std::numbers::pi / 4 + static_cast<double>(angle));
  int px[4];
  int py[4];
  for (int j = 0; j < 4; ++j) {
    px[j] = static_cast<int>(
        std::round(std::sin(static_cast<double>(k)) * static_cast<double>(size) + x));
    py[j] = static_cast<int>(
        std::round(std::cos(static_cast<double>(k)) * static_cast<double>(size) + y));
    k = static_cast<float>(static_cast<double>(k) + std::numbers::pi / 2);
  }
  for (int j = 0; j < 4; ++j) line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
}

Canvas schotter(int cols, int squares_per_row, int squares_per_col, const Rand& rand) {
  const int width = cols * 2;
  const int padding = width > 4 ? 2 : 0;
  const float side = static_cast<float>(width - padding * 2) / static_cast<float>(squares_per_row);
  const int height = static_cast<int>(side * static_cast<float>(squares_per_col) +
                                      static_cast<float>(padding * 2));
  Canvas canvas(width, height, 0);
  // A random share of the square's row, the lower the larger, with a random sign.
  auto jitter = [&](int y) {
    return static_cast<float>(rand()) / static_cast<float>(kRandMax) /
           static_cast<float>(squares_per_col) * static_cast<float>(y);
  };
  for (int y = 0; y < squares_per_col; ++y) {
    for (int x = 0; x < squares_per_row; ++x) {
      int sx =
          static_cast<int>(static_cast<float>(x) * side + side / 2 + static_cast<float>(padding));
      int sy =
          static_cast<int>(static_cast<float>(y) * side + side / 2 + static_cast<float>(padding));
      float angle = 0;
      if (y > 1) {
        float r1 = jitter(y);
        float r2 = jitter(y);
        float r3 = jitter(y);
        if (rand() % 2) r1 = -r1;
        if (rand() % 2) r2 = -r2;
        if (rand() % 2) r3 = -r3;
        angle = r1;
        sx = static_cast<int>(static_cast<float>(sx) + r2 * side / 3);
        sy = static_cast<int>(static_cast<float>(sy) + r3 * side / 3);
      }
      canvas.square(sx, sy, side, angle, 1);
    }
  }
  return canvas;
}

std::string render_braille(const Canvas& canvas) {
  // Bit i of a Braille character (U+2800 + bits) is the dot at kDots[i] of its 2×4 block.
  static constexpr int kDots[8][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0},
                                      {1, 1}, {1, 2}, {0, 3}, {1, 3}};
  std::string text;
  for (int y = 0; y < canvas.height(); y += 4) {
    for (int x = 0; x < canvas.width(); x += 2) {
      int bits = 0;
      for (int i = 0; i < 8; ++i) {
        if (canvas.get(x + kDots[i][0], y + kDots[i][1]) != 0) bits |= 1 << i;
      }
      const int code = 0x2800 + bits;
      text += static_cast<char>(0xE0 | (code >> 12));
      text += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      text += static_cast<char>(0x80 | (code & 0x3F));
    }
    // As Redis: a newline after every line of characters but one ending on the last pixel row.
    if (y != canvas.height() - 1) text += '\n';
  }
  return text;
}

namespace {

struct Skyscraper {
  int xoff;
  int width;
  int height;
  bool windows;
  int color;
};

void draw_skyscraper(Canvas& canvas, const Skyscraper& s, const Rand& rand) {
  const int bottom = canvas.height() - 1;
  const int top = bottom - s.height + 1;
  for (int y = bottom; y >= top; --y) {
    for (int x = s.xoff; x < s.xoff + s.width; ++x) {
      // The roof is four pixels narrower.
      if (y == top && (x <= s.xoff + 1 || x >= s.xoff + s.width - 2)) continue;
      int color = s.color;
      // Windows away from the walls: two pixels wide, one tall, lit in one of the two greys.
      if (s.windows && x > s.xoff + 1 && x < s.xoff + s.width - 2 && y > top + 1 &&
          y < bottom - 1) {
        const int relx = x - (s.xoff + 1);
        const int rely = y - (top + 1);
        if ((relx / 2) % 2 != 0 && rely % 2 != 0) {
          do {
            color = 1 + rand() % 2;
          } while (color == s.color);
          if (relx % 2 != 0) color = canvas.get(x - 1, y);
        }
      }
      canvas.set(x, y, color);
    }
  }
}

}  // namespace

Canvas skyline(int cols, int rows, const Rand& rand) {
  Canvas canvas(cols, rows, 3);
  const int h = canvas.height();
  // The grey ones first, the lighter behind.
  for (int color = 2; color >= 1; --color) {
    for (int offset = -10; offset < canvas.width();) {
      offset += rand() % 8;
      Skyscraper s{
          .xoff = offset, .width = 10 + rand() % 9, .height = 0, .windows = false, .color = color};
      s.height = color == 2 ? h / 2 + rand() % h / 2 : h / 2 + rand() % h / 3;
      draw_skyscraper(canvas, s, rand);
      offset += color == 2 ? s.width / 2 : s.width + 1;
    }
  }
  for (int offset = -10; offset < canvas.width();) {
    offset += rand() % 8;
    Skyscraper s{
        .xoff = offset, .width = 5 + rand() % 14, .height = 0, .windows = true, .color = 0};
    if (s.width % 4 != 0) s.width += s.width % 3;
    s.height = h / 3 + rand() % h / 2;
    draw_skyscraper(canvas, s, rand);
    offset += s.width + 5;
  }
  return canvas;
}

std::string render_colors(const Canvas& canvas) {
  // Foreground and background both set, which terminals agree on best.
  static constexpr const char* kColors[] = {"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"};
  std::string text;
  for (int y = 0; y < canvas.height(); ++y) {
    for (int x = 0; x < canvas.width(); ++x) {
      const int color = canvas.get(x, y);
      text += "\033[";
      text += kColors[color >= 0 && color <= 3 ? color : 0];
      text += " \033[0m";
    }
    if (y != canvas.height() - 1) text += '\n';
  }
  return text;
}

}  // namespace ringkv::engine::lolwut
