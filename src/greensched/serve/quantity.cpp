#include "greensched/serve/quantity.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace greensched::serve {
namespace {

using u128 = unsigned __int128;

// Products are kept below 2^126 so that one more multiplication by 10 cannot wrap.
constexpr u128 kLimit = u128{1} << 126;
constexpr int kMaxDigits = 30;  // 10^30 x scale (<= 10^6) < 2^120

struct Suffix {
  std::string_view text;
  int exp10;
  int exp2;
};

constexpr std::array<Suffix, 15> kSuffixes{{
    {"Ki", 0, 10},
    {"Mi", 0, 20},
    {"Gi", 0, 30},
    {"Ti", 0, 40},
    {"Pi", 0, 50},
    {"Ei", 0, 60},
    {"n", -9, 0},
    {"u", -6, 0},
    {"m", -3, 0},
    {"k", 3, 0},
    {"M", 6, 0},
    {"G", 9, 0},
    {"T", 12, 0},
    {"P", 15, 0},
    {"E", 18, 0},
}};

Error bad(std::string_view text, std::string_view why) {
  return Error{fmt::format("quantity '{}': {}", text.substr(0, 40), why)};
}

}  // namespace

Result<int64_t> parse_quantity(std::string_view text, int64_t scale) {
  if (text.empty()) return bad(text, "empty");
  if (text.size() > 64) return bad(text, "longer than 64 characters");
  if (scale <= 0 || scale > 1'000'000) return bad(text, "internal: bad scale");
  std::size_t i = 0;
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    ++i;
  }
  u128 mantissa = 0;
  int digits = 0;
  int frac = 0;
  bool any_digit = false;
  bool seen_dot = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (seen_dot) return bad(text, "two decimal points");
      seen_dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any_digit = true;
    if (seen_dot) ++frac;
    if (mantissa == 0 && c == '0') continue;  // leading zeros carry no digits
    if (++digits > kMaxDigits) return bad(text, "too many digits");
    mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
  }
  if (!any_digit) return bad(text, "no digits");

  int exp10 = -frac;
  int exp2 = 0;
  const std::string_view suffix = text.substr(i);
  if (!suffix.empty()) {
    bool known = false;
    for (const Suffix& s : kSuffixes) {
      if (s.text == suffix) {
        exp10 += s.exp10;
        exp2 = s.exp2;
        known = true;
        break;
      }
    }
    if (!known) {
      // Decimal exponent: e or E, an optional sign, 1 to 4 digits.
      if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) {
        return bad(text, fmt::format("unknown suffix '{}'", suffix.substr(0, 8)));
      }
      std::size_t j = 1;
      bool exp_negative = false;
      if (suffix[j] == '+' || suffix[j] == '-') exp_negative = suffix[j++] == '-';
      if (j == suffix.size() || suffix.size() - j > 4) return bad(text, "bad exponent");
      int e = 0;
      for (; j < suffix.size(); ++j) {
        if (suffix[j] < '0' || suffix[j] > '9') return bad(text, "bad exponent");
        e = e * 10 + (suffix[j] - '0');
      }
      exp10 += exp_negative ? -e : e;
    }
  }

  if (mantissa == 0) return int64_t{0};
  u128 value = mantissa * static_cast<u128>(scale);  // < 2^120
  if (value >= kLimit >> exp2) return bad(text, "out of range");
  value <<= exp2;
  if (exp10 >= 0) {
    for (int k = 0; k < exp10; ++k) {
      if (value >= kLimit / 10) return bad(text, "out of range");
      value *= 10;
    }
  } else if (exp10 < -38) {
    value = 1;  // a positive value far below one unit rounds up to one
  } else {
    u128 divisor = 1;
    for (int k = 0; k < -exp10; ++k) divisor *= 10;
    value = value / divisor + (value % divisor != 0 ? 1 : 0);
  }
  if (value > static_cast<u128>(kMaxQuantity)) return bad(text, "out of range");
  const auto result = static_cast<int64_t>(value);
  return negative ? -result : result;
}

Result<int64_t> quantity_from_json(const nlohmann::json& value, int64_t scale) {
  if (value.is_string()) return parse_quantity(value.get_ref<const std::string&>(), scale);
  if (value.is_number()) return parse_quantity(value.dump(), scale);
  return Error{fmt::format("quantity must be a string or number, not {}", value.type_name())};
}

}  // namespace greensched::serve
