// LOLWUT's computer art, drawn as redis-server 7.0.15 draws it: a canvas of small integer
// colors, Georg Nees's "Schotter" (LOLWUT VERSION 5) rendered in Braille characters, and an 8-bit
// skyline (VERSION 6) rendered with terminal colors. Pure: the random choices come from `Rand`,
// which returns numbers in [0, kRandMax] as C's rand() does.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ringkv::engine::lolwut {

inline constexpr int kRandMax = 2147483647;  // glibc's RAND_MAX
using Rand = std::function<int()>;

class Canvas {
 public:
  Canvas(int width, int height, int background);

  int width() const { return width_; }
  int height() const { return height_; }
  // Writes outside the canvas are ignored; reads outside it give 0.
  void set(int x, int y, int color);
  int get(int x, int y) const;
  // A line from (x1, y1) to (x2, y2), Bresenham's.
  void line(int x1, int y1, int x2, int y2, int color);
  // A square centred on (x, y) with sides `size` long, turned by `angle` radians.
  void square(int x, int y, float size, float angle, int color);

 private:
  int width_;
  int height_;
  std::vector<uint8_t> pixels_;
};

// Schotter for a terminal `cols` wide: squares_per_row × squares_per_col squares, the rows below
// the second turned and moved more and more at random.
Canvas schotter(int cols, int squares_per_row, int squares_per_col, const Rand& rand);
// Each 2×4 block of pixels as one Braille character, a line per 4 pixel rows.
std::string render_braille(const Canvas& canvas);

// A skyline `cols` × `rows`: two rows of grey skyscrapers behind black ones with lit windows.
Canvas skyline(int cols, int rows, const Rand& rand);
// Each pixel as a space in the terminal's black, two greys or white.
std::string render_colors(const Canvas& canvas);

}  // namespace ringkv::engine::lolwut
