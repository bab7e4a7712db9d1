#include "greensched/energy/civil_time.hpp"

#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace greensched::energy {
namespace {

// Exactly `n` decimal digits at `pos`.
std::optional<int> digits(std::string_view s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

Result<int64_t> parse_civil_time(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Error{
        fmt::format("bad time '{}': {} (expected YYYY-MM-DD[T| ]HH:MM[:SS] with an optional Z or "
                    "+HH:MM offset)",
                    text, why)};
  };
  const auto year = digits(text, 0, 4);
  const auto month = digits(text, 5, 2);
  const auto day = digits(text, 8, 2);
  if (!year || !month || !day || text[4] != '-' || text[7] != '-') return bad("no date");
  if (text.size() < 16 || (text[10] != 'T' && text[10] != ' ') || text[13] != ':') {
    return bad("no HH:MM time");
  }
  const auto hour = digits(text, 11, 2);
  const auto minute = digits(text, 14, 2);
  if (!hour || !minute) return bad("no HH:MM time");
  std::size_t pos = 16;
  int second = 0;
  if (pos < text.size() && text[pos] == ':') {
    const auto s = digits(text, pos + 1, 2);
    if (!s) return bad("bad seconds");
    second = *s;
    pos += 3;
  }
  int64_t offset_s = 0;
  const std::string_view rest = text.substr(pos);
  if (rest == "Z") {
  } else if (!rest.empty()) {
    const auto oh = digits(rest, 1, 2);
    const auto om = digits(rest, 4, 2);
    if (rest.size() != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' || !oh || !om ||
        *oh > 14 || *om > 59) {
      return bad("trailing text is not Z or a +HH:MM offset");
    }
    offset_s = (rest[0] == '-' ? -1 : 1) * (*oh * 3600 + *om * 60);
  }
  if (*hour > 23 || *minute > 59 || second > 59) return bad("time of day out of range");
  const std::chrono::year_month_day ymd{std::chrono::year{*year},
                                        std::chrono::month{static_cast<unsigned>(*month)},
                                        std::chrono::day{static_cast<unsigned>(*day)}};
  if (!ymd.ok()) return bad("no such date");
  const int64_t days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  return days * 86400 + *hour * 3600 + *minute * 60 + second - offset_s;
}

std::string format_civil_time(int64_t epoch_s) {
  const std::chrono::sys_seconds t{std::chrono::seconds{epoch_s}};
  const auto day = std::chrono::floor<std::chrono::days>(t);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss hms{t - day};
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count());
}

}  // namespace greensched::energy
