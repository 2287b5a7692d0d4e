// Unit tests of ZSetObject: both encodings and the switch between them, ranks and range bounds
// against a plain sorted model (100k elements for the skip list), memory accounting, copies, and
// the score and range parsing rules of Redis 7.0.15.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/types/zset_type.h"

namespace {

using namespace ringkv::engine;
using Encoding = ZSetObject::Encoding;
using Model = std::set<std::pair<double, std::string>>;

std::vector<std::pair<std::string, double>> all(const ZSetObject& z) {
  std::vector<std::pair<std::string, double>> out;
  z.for_each([&](std::string_view m, double s) { out.emplace_back(std::string(m), s); });
  return out;
}

// Checks every rank, score and both walking directions against the model.
void check_against(const ZSetObject& z, const Model& model) {
  REQUIRE(z.size() == model.size());
  size_t rank = 0;
  auto elements = all(z);
  for (const auto& [score, member] : model) {
    CHECK(elements[rank].first == member);
    CHECK(elements[rank].second == score);
    ++rank;
  }
  if (model.empty()) return;
  std::vector<std::string> down;
  z.visit_ranks(model.size() - 1, model.size(), true,
                [&](std::string_view m, double) { down.emplace_back(m); });
  std::vector<std::string> want;
  for (auto it = model.rbegin(); it != model.rend(); ++it) want.push_back(it->second);
  CHECK(down == want);
}

}  // namespace

TEST_CASE("a small sorted set is a listpack ordered by score, then member bytes") {
  ZSetObject z;
  CHECK(z.encoding_name() == "listpack");
  CHECK(z.set("b", 2));
  CHECK(z.set("a", 2));
  CHECK(z.set("c", 1));
  CHECK_FALSE(z.set("a", 0.5));
  CHECK(all(z) == std::vector<std::pair<std::string, double>>{{"a", 0.5}, {"c", 1}, {"b", 2}});
  CHECK(z.score("c") == 1);
  CHECK_FALSE(z.score("zz"));
  CHECK(z.rank("b") == 2u);
  CHECK_FALSE(z.rank("zz"));
  CHECK(z.erase("c"));
  CHECK_FALSE(z.erase("c"));
  CHECK(z.size() == 2);
  // The listpack keeps scores as text in Redis, where -0 reads back as 0.
  z.set("neg", -0.0);
  CHECK_FALSE(std::signbit(*z.score("neg")));
  // Unsigned byte order: "\xff" sorts after "a".
  z.set("\xff", 5);
  z.set("a\0b", 5);
  CHECK(z.rank("\xff") == 3u);
}

TEST_CASE("the listpack becomes a skiplist past 128 members or a 64-byte member, never back") {
  ZSetObject z;
  for (int i = 0; i < 128; ++i) z.set("m" + std::to_string(i), i);
  CHECK(z.encoding() == Encoding::kListpack);
  z.set("m128", 128);
  CHECK(z.encoding() == Encoding::kSkiplist);
  for (int i = 0; i < 129; ++i) z.erase("m" + std::to_string(i));
  CHECK(z.size() == 0);
  CHECK(z.encoding() == Encoding::kSkiplist);

  ZSetObject big_member;
  big_member.set(std::string(64, 'x'), 1);
  CHECK(big_member.encoding() == Encoding::kListpack);
  big_member.set(std::string(65, 'x'), 1);
  CHECK(big_member.encoding_name() == "skiplist");
  CHECK(big_member.size() == 2);
  // A skiplist keeps -0 as given.
  big_member.set("neg", -0.0);
  CHECK(std::signbit(*big_member.score("neg")));
}

TEST_CASE("score and lex ranges resolve to ranks in both encodings") {
  for (bool skiplist : {false, true}) {
    ZSetObject z(skiplist ? Encoding::kSkiplist : Encoding::kListpack);
    for (int i = 0; i < 10; ++i) z.set(std::string(1, static_cast<char>('a' + i)), i);
    ScoreRange r{2, 5, false, false};
    CHECK(z.score_lower_rank(r) == 2);
    CHECK(z.score_upper_rank(r) == 6);
    r = {2, 5, true, true};
    CHECK(z.score_lower_rank(r) == 3);
    CHECK(z.score_upper_rank(r) == 5);
    r = {-INFINITY, INFINITY, false, false};
    CHECK(z.score_lower_rank(r) == 0);
    CHECK(z.score_upper_rank(r) == 10);

    ZSetObject lex(skiplist ? Encoding::kSkiplist : Encoding::kListpack);
    for (const char* m : {"a", "b", "c", "d", "e"}) lex.set(m, 0);
    LexRange lr;
    REQUIRE(parse_lex_range("[b", "(d", lr));
    CHECK(lex.lex_lower_rank(lr) == 1);
    CHECK(lex.lex_upper_rank(lr) == 3);
    REQUIRE(parse_lex_range("-", "+", lr));
    CHECK(lex.lex_lower_rank(lr) == 0);
    CHECK(lex.lex_upper_rank(lr) == 5);
    REQUIRE(parse_lex_range("+", "-", lr));
    CHECK(lex.lex_lower_rank(lr) == 5);
    CHECK(lex.lex_upper_rank(lr) == 0);

    CHECK(z.erase_ranks(8, 100) == 2);
    CHECK(z.erase_ranks(20, 1) == 0);
    CHECK(z.erase_ranks(0, 3) == 3);
    CHECK(all(z).front().first == "d");
    CHECK(z.size() == 5);
  }
}

TEST_CASE("100k elements in a skiplist agree with a sorted model through updates and removals") {
  std::mt19937_64 rng(42);
  ZSetObject z;
  Model model;
  std::vector<double> score_of(100'000, NAN);
  for (int i = 0; i < 100'000; ++i) {
    const double s = static_cast<double>(rng() % 1000);
    z.set("member:" + std::to_string(i), s);
    model.emplace(s, "member:" + std::to_string(i));
    score_of[i] = s;
  }
  check_against(z, model);
  for (int k = 0; k < 20'000; ++k) {
    const size_t i = rng() % 100'000;
    const std::string m = "member:" + std::to_string(i);
    if (std::isnan(score_of[i])) continue;
    model.erase({score_of[i], m});
    if (k % 3 == 0) {
      CHECK(z.erase(m));
      score_of[i] = NAN;
    } else {
      const double s = static_cast<double>(rng() % 1000) + 0.5;
      CHECK_FALSE(z.set(m, s));
      model.emplace(s, m);
      score_of[i] = s;
    }
  }
  check_against(z, model);
  // Ranks of a sample of members, and a rank-addressed walk from the middle.
  auto it = model.begin();
  for (size_t r = 0; r < model.size(); r += 997, std::advance(it, 997)) {
    CHECK(z.rank(it->second) == r);
    std::string at;
    z.visit_ranks(r, 1, false, [&](std::string_view m, double) { at = m; });
    CHECK(at == it->second);
    if (model.size() - r <= 997) break;
  }
  const ScoreRange r{100, 200, false, true};
  size_t expected = 0;
  for (const auto& e : model) expected += e.first >= 100 && e.first < 200 ? 1 : 0;
  CHECK(z.score_upper_rank(r) - z.score_lower_rank(r) == expected);
  // Memory goes back down as elements leave.
  const size_t full = z.memory();
  CHECK(z.erase_ranks(0, z.size() - 10) == model.size() - 10);
  CHECK(z.size() == 10);
  CHECK(z.memory() < full / 100);
}

TEST_CASE("moving members to new scores keeps every rank, span and backward link") {
  // Small enough to check every rank after every move: moves to the front, the back, next to
  // their place, between equal scores (member order), and members of every level.
  std::mt19937_64 rng(7);
  for (int round = 0; round < 4; ++round) {
    ZSetObject z(Encoding::kSkiplist);
    Model model;
    std::vector<double> score_of(300);
    for (int i = 0; i < 300; ++i) {
      score_of[i] = static_cast<double>(rng() % 50);
      z.set("m" + std::to_string(i), score_of[i]);
      model.emplace(score_of[i], "m" + std::to_string(i));
    }
    for (int k = 0; k < 400; ++k) {
      const size_t i = rng() % 300;
      const std::string m = "m" + std::to_string(i);
      double s = 0;
      switch (rng() % 5) {
        case 0:
          s = -1.0 - static_cast<double>(k);
          break;  // the new first
        case 1:
          s = 1000.0 + static_cast<double>(k);
          break;  // the new last
        case 2:
          s = score_of[i] + (rng() % 2 == 0 ? 0.25 : -0.25);
          break;  // next to its place
        default:
          s = static_cast<double>(rng() % 50);
          break;  // among equal scores
      }
      if (s == score_of[i]) continue;
      model.erase({score_of[i], m});
      model.emplace(s, m);
      score_of[i] = s;
      CHECK_FALSE(z.set(m, s));
      if (k % 20 != 0) continue;
      check_against(z, model);
      size_t r = 0;
      for (const auto& e : model) {
        REQUIRE(z.rank(e.second) == r);
        std::string at;
        z.visit_ranks(r, 1, false, [&](std::string_view mm, double) { at = mm; });
        REQUIRE(at == e.second);
        ++r;
      }
    }
    check_against(z, model);
    // Removing every other member still finds each one and keeps the order.
    size_t n = 0;
    for (auto it = model.begin(); it != model.end();) {
      if (n++ % 2 == 0) {
        CHECK(z.erase(it->second));
        it = model.erase(it);
      } else {
        ++it;
      }
    }
    check_against(z, model);
    size_t r = 0;
    for (const auto& e : model) CHECK(z.rank(e.second) == r++);
  }
}

TEST_CASE("clone is a deep copy with the same order and encoding") {
  ZSetObject small;
  small.set("a", 1);
  small.set("b", 2);
  auto small_copy = small.clone();
  small.set("c", 3);
  const auto& sc = static_cast<const ZSetObject&>(*small_copy);
  CHECK(sc.size() == 2);
  CHECK(sc.encoding() == Encoding::kListpack);

  ZSetObject big;
  for (int i = 0; i < 300; ++i) big.set("k" + std::to_string(i), -i);
  auto big_copy = big.clone();
  const auto& bc = static_cast<const ZSetObject&>(*big_copy);
  CHECK(bc.encoding() == Encoding::kSkiplist);
  CHECK(all(bc) == all(big));
  CHECK(bc.memory() > 300 * 30);
}

TEST_CASE("scores parse as Redis's string2d; range bounds as zslParseRange and zslParseLexRange") {
  double d = 0;
  CHECK(parse_score("1.5", d));
  CHECK(d == 1.5);
  CHECK(parse_score("inf", d));
  CHECK(parse_score("-inf", d));
  CHECK(parse_score("1e-320", d));  // subnormal: kept
  CHECK_FALSE(parse_score("1e-400", d));
  CHECK_FALSE(parse_score("1e400", d));
  CHECK_FALSE(parse_score("nan", d));
  CHECK_FALSE(parse_score("", d));
  CHECK_FALSE(parse_score(" 1", d));
  CHECK_FALSE(parse_score("1 ", d));
  CHECK_FALSE(parse_score("x", d));

  bool ex = false;
  CHECK(parse_score_bound("(1.5", d, ex));
  CHECK((d == 1.5 && ex));
  CHECK(parse_score_bound("", d, ex));  // strtod of "" is 0 and Redis accepts it
  CHECK(parse_score_bound("(", d, ex));
  CHECK(parse_score_bound("1e400", d, ex));
  CHECK(std::isinf(d));
  CHECK_FALSE(parse_score_bound("nan", d, ex));
  CHECK_FALSE(parse_score_bound("1x", d, ex));

  LexRange lr;
  CHECK(parse_lex_range("[a", "(b", lr));
  CHECK((lr.min.value == "a" && !lr.min.exclusive && lr.max.value == "b" && lr.max.exclusive));
  CHECK_FALSE(parse_lex_range("a", "+", lr));
  CHECK_FALSE(parse_lex_range("-", "", lr));
  CHECK_FALSE(parse_lex_range("+a", "+", lr));
  CHECK(parse_lex_range("[", "(", lr));
}

TEST_CASE("zset_add applies ZADD's options as Redis does") {
  Store store;
  auto add = [&](std::vector<ScoredMember> pairs, ZAddFlags flags) {
    return zset_add(store, "z", pairs, flags);
  };
  auto score = [&](std::string_view member) {
    return read_object<ZSetObject>(store, "z").value()->score(member);
  };
  // XX never creates the key.
  Result<ZAddOutcome> xx = add({{1, "a"}}, {.xx = true});
  REQUIRE(xx);
  CHECK(xx->added == 0);
  CHECK(store.peek("z") == nullptr);

  Result<ZAddOutcome> first = add({{1, "a"}, {2, "b"}}, {});
  REQUIRE(first);
  CHECK(first->added == 2);
  CHECK(first->processed == 2);
  // NX skips existing members; XX updates only them; CH is the handler's sum of both counts.
  Result<ZAddOutcome> nx = add({{5, "a"}, {3, "c"}}, {.nx = true});
  CHECK((nx->added == 1 && nx->updated == 0 && *score("a") == 1));
  Result<ZAddOutcome> upd = add({{7, "a"}, {9, "d"}}, {.xx = true});
  CHECK((upd->added == 0 && upd->updated == 1 && *score("a") == 7 && !score("d")));
  // GT and LT update only in their direction; a new member is still added.
  Result<ZAddOutcome> gt = add({{6, "a"}, {4, "e"}}, {.gt = true});
  CHECK((gt->updated == 0 && gt->added == 1 && *score("a") == 7));
  Result<ZAddOutcome> lt = add({{6, "a"}}, {.lt = true});
  CHECK((lt->updated == 1 && *score("a") == 6));
  // INCR: the new score, or nothing processed when NX skips it.
  Result<ZAddOutcome> incr = add({{1.5, "a"}}, {.incr = true});
  CHECK((incr->processed == 1 && incr->score == 7.5));
  Result<ZAddOutcome> skipped = add({{1, "a"}}, {.nx = true, .incr = true});
  CHECK(skipped->processed == 0);
  // Same score: processed, not updated.
  Result<ZAddOutcome> same = add({{7.5, "a"}}, {});
  CHECK((same->processed == 1 && same->updated == 0 && same->added == 0));
  // An increment making NaN is refused and changes nothing.
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE(add({{inf, "inf"}}, {}));
  Result<ZAddOutcome> nan = add({{-inf, "inf"}}, {.incr = true});
  REQUIRE(!nan);
  CHECK(nan.error() == "ERR resulting score is not a number (NaN)");
  CHECK(*score("inf") == inf);
  // A key of another type: WRONGTYPE, untouched.
  store.set_string("s", "v", Expiry::none());
  Result<ZAddOutcome> wrong = zset_add(store, "s", std::vector<ScoredMember>{{1, "a"}}, {});
  REQUIRE(!wrong);
  CHECK(wrong.error().starts_with("WRONGTYPE"));
}
