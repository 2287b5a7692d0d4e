// Unit tests for LOLWUT's canvas and drawings (engine/commands/lolwut_art.h). The integration test
// test_observability compares the whole replies with redis-server's.
#include <doctest/doctest.h>

#include <string>

#include "engine/commands/lolwut_art.h"

using namespace ringkv::engine::lolwut;

namespace {

// A rand() that always returns `value`, counting its calls.
struct FixedRand {
  int value = 0;
  int calls = 0;
  Rand fn() {
    return [this] {
      ++calls;
      return value;
    };
  }
};

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a canvas ignores writes outside it and reads 0 there") {
  Canvas canvas(3, 2, 3);
  CHECK(canvas.get(2, 1) == 3);
  canvas.set(-1, 0, 1);
  canvas.set(3, 0, 1);
  canvas.set(0, 2, 1);
  CHECK(canvas.get(-1, 0) == 0);
  CHECK(canvas.get(3, 0) == 0);
  canvas.set(1, 1, 2);
  CHECK(canvas.get(1, 1) == 2);
}

TEST_CASE("lines are Bresenham's, both ends included") {
  Canvas canvas(5, 5, 0);
  canvas.line(4, 0, 0, 4, 1);
  for (int i = 0; i < 5; ++i) CHECK(canvas.get(4 - i, i) == 1);
  CHECK(canvas.get(0, 0) == 0);
  Canvas flat(5, 1, 0);
  flat.line(1, 0, 3, 0, 1);
  CHECK(flat.get(0, 0) == 0);
  CHECK(flat.get(1, 0) == 1);
  CHECK(flat.get(3, 0) == 1);
  CHECK(flat.get(4, 0) == 0);
}

TEST_CASE("Schotter's size follows the columns and squares; two rows draw nothing at random") {
  FixedRand rand;
  const Canvas two_rows = schotter(10, 2, 2, rand.fn());
  CHECK(two_rows.width() == 20);
  CHECK(two_rows.height() == 20);  // squares of 8 pixels and a padding of 2
  CHECK(rand.calls == 0);
  // An unturned square of side 8 centred on (6, 6): its corners round to 4 pixels from the centre
  // (a radius of round(8 / sqrt 2) = 6, times sin 45 degrees).
  CHECK(two_rows.get(2, 2) == 1);
  CHECK(two_rows.get(10, 10) == 1);
  CHECK(two_rows.get(6, 2) == 1);
  CHECK(two_rows.get(3, 3) == 0);
  CHECK(two_rows.get(6, 6) == 0);
  const Canvas rows12 = schotter(66, 8, 12, rand.fn());
  CHECK(rand.calls == 10 * 8 * 6);  // three shares and three signs for each square below row 2
  // Without a random turn the lower rows are the upper ones again, a square lower.
  const int side = (132 - 4) / 8;
  for (int x = 0; x < rows12.width(); ++x) {
    for (int y = 2; y < 2 + side; ++y) CHECK(rows12.get(x, y + 4 * side) == rows12.get(x, y));
  }
}

TEST_CASE("Braille rendering: a character per 2x4 block, Redis's newlines") {
  Canvas canvas(4, 8, 0);
  canvas.set(0, 0, 1);  // bit 0
  canvas.set(1, 3, 1);  // bit 7
  canvas.set(2, 4, 1);  // second row, second character, bit 0
  // U+2881 (bits 0 and 7), U+2800, newline, U+2800, U+2801, newline (row 4 is not the last).
  CHECK(render_braille(canvas) == "\u2881\u2800\n\u2800\u2801\n");
  Canvas five(2, 5, 0);
  CHECK(render_braille(five) == "\u2800\n\u2800");  // the last row starts on pixel row 4
}

TEST_CASE("the skyline: grey ones behind, black ones with windows in front") {
  FixedRand rand;
  const Canvas canvas = skyline(40, 12, rand.fn());
  CHECK(canvas.width() == 40);
  CHECK(canvas.height() == 12);
  CHECK(canvas.get(0, 0) == 3);   // the sky
  CHECK(canvas.get(0, 11) == 2);  // a light grey one at the left edge
  CHECK(canvas.get(2, 11) == 0);  // the second black one starts at x = 2
  const std::string text = render_colors(canvas);
  CHECK(count(text, "\033[0m") == 40 * 12);
  CHECK(count(text, "\n") == 11);
  CHECK(render_colors(Canvas(1, 1, 3)) == "\033[0;97;107m \033[0m");
}
