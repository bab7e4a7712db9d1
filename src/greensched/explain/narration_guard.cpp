#include "greensched/explain/narration_guard.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

namespace greensched::explain {
namespace {

using nlohmann::json;

// One token of a text: a number (with the decimals it was written with and the unit written
// after it), a name (letters and digits together), a word (lower case), or the end of a
// clause (punctuation).
struct Token {
  enum Kind { kNumber, kName, kWord, kBreak } kind = kWord;
  std::string text;  // as written (names, numbers); lower case (words)
  double value = 0;
  int decimals = 0;
  std::string unit;  // normalised (numbers): "" when none is written
};

Token token(Token::Kind kind, std::string text) {
  Token t;
  t.kind = kind;
  t.text = std::move(text);
  return t;
}

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_alpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The unit a word names ("" when it names none).
std::string unit_of(std::string_view word) {
  static const std::map<std::string, std::string, std::less<>> kUnits{{"w", "W"},
                                                                      {"watt", "W"},
                                                                      {"watts", "W"},
                                                                      {"kw", "kW"},
                                                                      {"kilowatt", "kW"},
                                                                      {"kilowatts", "kW"},
                                                                      {"kwh", "kWh"},
                                                                      {"mwh", "MWh"},
                                                                      {"gib", "GiB"},
                                                                      {"mib", "MiB"},
                                                                      {"gb", "GB"},
                                                                      {"vcpu", "vCPU"},
                                                                      {"vcpus", "vCPU"},
                                                                      {"cpu", "vCPU"},
                                                                      {"cpus", "vCPU"},
                                                                      {"cores", "vCPU"},
                                                                      {"gpu", "GPU"},
                                                                      {"gpus", "GPU"},
                                                                      {"milli-gpu", "mGPU"},
                                                                      {"g", "g"},
                                                                      {"grams", "g"},
                                                                      {"gco2/kwh", "gCO2/kWh"},
                                                                      {"%", "%"},
                                                                      {"percent", "%"},
                                                                      {"s", "s"},
                                                                      {"sec", "s"},
                                                                      {"second", "s"},
                                                                      {"seconds", "s"},
                                                                      {"h", "h"},
                                                                      {"hour", "h"},
                                                                      {"hours", "h"},
                                                                      {"min", "min"},
                                                                      {"minute", "min"},
                                                                      {"minutes", "min"},
                                                                      {"t", "t"},
                                                                      {"tonnes", "t"},
                                                                      {"usd", "USD"},
                                                                      {"$", "USD"}};
  auto it = kUnits.find(lower(std::string(word)));
  return it == kUnits.end() ? "" : it->second;
}

// Words that may stand between a number and its unit ("2 whole GPUs", "165 more W").
bool filler(std::string_view word) {
  static const std::set<std::string, std::less<>> kFill{
      "whole", "more", "less", "fewer", "extra", "additional", "free", "fully", "shared"};
  return kFill.contains(word);
}

std::optional<double> number_word(std::string_view word) {
  static const std::map<std::string, double, std::less<>> kWords{
      {"zero", 0},  {"two", 2},   {"three", 3}, {"four", 4}, {"five", 5},    {"six", 6},
      {"seven", 7}, {"eight", 8}, {"nine", 9},  {"ten", 10}, {"eleven", 11}, {"twelve", 12}};
  auto it = kWords.find(word);
  if (it == kWords.end()) return std::nullopt;
  return it->second;
}

// A plain number as written ("1,213", "-0.67", "+21"): its value and decimals.
std::optional<std::pair<double, int>> parse_number(std::string_view s) {
  std::string digits;
  int decimals = -1;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) digits += s[i++];
  if (i >= s.size() || !is_digit(s[i])) return std::nullopt;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (is_digit(c)) {
      digits += c;
      if (decimals >= 0) ++decimals;
    } else if (c == ',' && decimals < 0 && i + 3 < s.size() && is_digit(s[i + 1]) &&
               is_digit(s[i + 2]) && is_digit(s[i + 3]) &&
               (i + 4 == s.size() || !is_digit(s[i + 4]))) {
      continue;  // thousands
    } else if (c == '.' && decimals < 0 && i + 1 < s.size() && is_digit(s[i + 1])) {
      digits += c;
      decimals = 0;
    } else {
      return std::nullopt;
    }
  }
  return std::pair{std::strtod(digits.c_str(), nullptr), std::max(decimals, 0)};
}

// A number glued to its unit ("21s", "0.67kW", "14%").
std::optional<Token> glued_number(const std::string& chunk) {
  std::size_t i = 0;
  if (i < chunk.size() && (chunk[i] == '-' || chunk[i] == '+')) ++i;
  while (i < chunk.size() && (is_digit(chunk[i]) || chunk[i] == '.' || chunk[i] == ',')) ++i;
  if (i == 0 || i == chunk.size()) return std::nullopt;
  auto n = parse_number(std::string_view(chunk).substr(0, i));
  const std::string unit = unit_of(chunk.substr(i));
  if (!n || unit.empty()) return std::nullopt;
  Token t;
  t.kind = Token::kNumber;
  t.text = chunk;
  t.value = n->first;
  t.decimals = n->second;
  t.unit = unit;
  return t;
}

bool clause_break(char c) {
  return c == ';' || c == ':' || c == '!' || c == '?' || c == '(' || c == ')' || c == '[' ||
         c == ']' || c == '"' || c == '\n';
}

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> out;
  // A break's text: "," within a sentence, "." at its end (or a colon, a parenthesis ...).
  const auto add_break = [&out](char mark) {
    if (out.empty()) return;
    if (out.back().kind != Token::kBreak) {
      out.push_back(token(Token::kBreak, std::string(1, mark)));
    } else if (mark == '.') {
      out.back().text.back() = '.';
    }
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) != 0 && c != '\n') {
      ++i;
      continue;
    }
    if (clause_break(c) || c == ',') {
      add_break(c == ',' ? ',' : '.');
      ++i;
      continue;
    }
    // A chunk: up to a space or a clause mark; "." and "," only between digits.
    std::size_t j = i;
    while (j < text.size()) {
      const char d = text[j];
      if (std::isspace(static_cast<unsigned char>(d)) != 0 || clause_break(d)) break;
      if ((d == ',' || d == '.') &&
          !(j > i && is_digit(text[j - 1]) && j + 1 < text.size() && is_digit(text[j + 1]))) {
        if (d == '.' && j + 1 < text.size() && is_alpha(text[j + 1]) && j > i &&
            is_alpha(text[j - 1])) {
          ++j;  // "e.g", a name with a dot
          continue;
        }
        break;
      }
      ++j;
    }
    if (j == i) {  // a lone "." or ","
      add_break(text[i] == ',' ? ',' : '.');
      ++i;
      continue;
    }
    std::string chunk(text.substr(i, j - i));
    i = j;
    // Quotes and trailing apostrophes around a word.
    while (!chunk.empty() && (chunk.back() == '\'' || chunk.back() == '*' || chunk.back() == '`')) {
      chunk.pop_back();
    }
    while (!chunk.empty() &&
           (chunk.front() == '\'' || chunk.front() == '*' || chunk.front() == '`')) {
      chunk.erase(chunk.begin());
    }
    if (chunk.size() > 2 && chunk.compare(chunk.size() - 2, 2, "'s") == 0)
      chunk.resize(chunk.size() - 2);
    if (chunk.empty()) continue;
    bool percent = false;
    std::string bare = chunk;
    if (bare.size() > 1 && bare.back() == '%') {
      bare.pop_back();
      percent = true;
    }
    if (auto n = parse_number(bare)) {
      Token t{Token::kNumber, chunk, n->first, n->second, percent ? "%" : ""};
      out.push_back(t);
      continue;
    }
    // "0/1213": numbers on both sides of a slash.
    if (const std::size_t slash = chunk.find('/'); slash != std::string::npos) {
      auto a = parse_number(std::string_view(chunk).substr(0, slash));
      auto b = parse_number(std::string_view(chunk).substr(slash + 1));
      if (a && b) {
        out.push_back({Token::kNumber, chunk.substr(0, slash), a->first, a->second, ""});
        out.push_back({Token::kNumber, chunk.substr(slash + 1), b->first, b->second, ""});
        continue;
      }
    }
    if (auto g = glued_number(chunk)) {
      out.push_back(*g);
      continue;
    }
    const bool letters = std::any_of(chunk.begin(), chunk.end(), is_alpha);
    const bool digits = std::any_of(chunk.begin(), chunk.end(), is_digit);
    if (letters && digits) {
      out.push_back(token(Token::kName, chunk));
      continue;
    }
    const std::string word = lower(chunk);
    if (auto n = number_word(word)) {
      out.push_back({Token::kNumber, chunk, *n, 0, ""});
      continue;
    }
    out.push_back(token(Token::kWord, word));
  }
  // Units: the word after a number (past one filler word).
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (out[k].kind != Token::kNumber || !out[k].unit.empty()) continue;
    for (std::size_t m = k + 1; m < out.size() && m <= k + 2; ++m) {
      if (out[m].kind == Token::kBreak) break;
      const std::string unit = unit_of(out[m].text);
      if (!unit.empty()) {
        out[k].unit = unit;
        break;
      }
      if (out[m].kind != Token::kWord || !filler(out[m].text)) break;
    }
  }
  return out;
}

// A value of the facts: the key it was found under (its path's last key, lower case).
struct FactNumber {
  std::string key;
  double value;
};

// What a quantity's name in a reply refers to in the facts' keys.
struct Quantity {
  std::array<const char*, 3> words;  // as a reply writes it
  const char* key;                   // part of the facts' keys holding it
};
constexpr std::array<Quantity, 6> kQuantities{{
    {{"score", "scored", "scores"}, "score"},
    {{"margin", "margins", "lead"}, "margin"},
    {{"power", "watts", "draws"}, "watts"},
    {{"slack", "slacks", "window"}, "slack"},
    {{"fragmentation", "fragment", "fragments"}, "frag"},
    {{"intensity", "intensities", "ci"}, "ci"},
}};

// A role a clause may name: the runner-up, by words or by the name the facts give it.
struct Role {
  std::string prefix;  // of the facts' keys that are its
  std::set<std::string> words;
  std::set<std::string> names;
};

bool matches_at_precision(double written, int decimals, double fact) {
  const double scale = std::pow(10.0, decimals);
  const double a = std::round(std::abs(fact) * scale);
  const double b = std::round(std::abs(written) * scale);
  return a == b;
}

class Index {
 public:
  explicit Index(const json& facts) {
    walk(facts, "", "");
    if (const auto it = facts.find("sentences"); it != facts.end() && it->is_array()) {
      for (const json& s : *it) {
        if (s.is_string()) add_template(s.get<std::string>());
      }
    }
    Role runner{"runner_up", {"runner-up", "runner", "second-best", "second"}, {}};
    if (const auto it = facts.find("runner_up"); it != facts.end() && it->is_string()) {
      runner.names.insert(it->get<std::string>());
    }
    roles_.push_back(runner);
    if (const auto it = facts.find("chosen_node"); it != facts.end() && it->is_string()) {
      chosen_names_.insert(it->get<std::string>());
    }
  }

  // Why the number is not one of the facts ("" when it is); appends what it cited.
  std::string check_number(const Token& t, std::vector<std::string>& used) const {
    // A printed number at the reply's precision or less (13.5 for a printed 13.53).
    const bool in_template =
        std::any_of(template_numbers_.begin(), template_numbers_.end(), [&t](const Token& s) {
          return t.decimals <= s.decimals && matches_at_precision(t.value, t.decimals, s.value);
        });
    const bool in_facts = std::any_of(numbers_.begin(), numbers_.end(), [&t](const FactNumber& f) {
      return matches_at_precision(t.value, t.decimals, f.value);
    });
    if (!in_template && !in_facts) return fmt::format("{} is not in the facts", t.text);
    if (!t.unit.empty()) {
      const auto it = by_unit_.find(t.unit);
      const bool fits = it != by_unit_.end() &&
                        std::any_of(it->second.begin(), it->second.end(), [&t](const Token& s) {
                          return matches_at_precision(t.value, t.decimals, s.value);
                        });
      if (!fits)
        return fmt::format("{} {} is not a value the facts give in {}", t.text, t.unit, t.unit);
    }
    used.push_back(t.unit.empty() ? t.text : fmt::format("{} {}", t.text, t.unit));
    return "";
  }

  // Why a number written after a quantity's name (in the same clause, within six words) is
  // not that quantity's value, of the role its sentence names last before it where the facts
  // have one ("" when it is, or when the facts say nothing of that quantity).
  std::string check_quantity(const std::vector<Token>& tokens, std::size_t at) const {
    const Token& t = tokens[at];
    std::size_t start = at;
    while (start > 0 && tokens[start - 1].kind != Token::kBreak) --start;
    const Quantity* q = nullptr;
    for (std::size_t k = at; k-- > start && at - k <= 6 && q == nullptr;) {
      if (tokens[k].kind == Token::kNumber) break;  // the quantity is another number's
      for (const Quantity& cand : kQuantities) {
        for (const char* w : cand.words) {
          if (tokens[k].kind == Token::kWord && tokens[k].text == w) q = &cand;
        }
      }
    }
    if (q == nullptr) return "";
    // The role named last before the number in its sentence (the chosen node: none).
    const Role* role = nullptr;
    bool named = false;
    for (std::size_t k = at; k-- > 0 && !named;) {
      if (tokens[k].kind == Token::kBreak && tokens[k].text == ".") break;
      if (tokens[k].kind == Token::kWord && chosen_words_.contains(tokens[k].text)) named = true;
      if (tokens[k].kind == Token::kName && chosen_names_.contains(tokens[k].text)) named = true;
      for (const Role& r : roles_) {
        if ((tokens[k].kind == Token::kWord && r.words.contains(tokens[k].text)) ||
            (tokens[k].kind == Token::kName && r.names.contains(tokens[k].text))) {
          role = &r;
          named = true;
        }
      }
    }
    // The quantity's values of that role; of no role when the facts give none of it.
    const auto values_of = [this, q](const Role* r) {
      std::vector<double> values;
      for (const FactNumber& f : numbers_) {
        if (f.key.find(q->key) == std::string::npos) continue;
        const bool of_any = std::any_of(roles_.begin(), roles_.end(), [&f](const Role& other) {
          return f.key.rfind(other.prefix, 0) == 0;
        });
        if (r != nullptr ? f.key.rfind(r->prefix, 0) == 0 : !of_any) values.push_back(f.value);
      }
      return values;
    };
    std::vector<double> values = values_of(role);
    if (values.empty() && role != nullptr) {
      role = nullptr;
      values = values_of(nullptr);
    }
    if (values.empty()) return "";
    if (std::any_of(values.begin(), values.end(),
                    [&t](double v) { return matches_at_precision(t.value, t.decimals, v); })) {
      return "";
    }
    std::string whose = role != nullptr ? fmt::format("the {}'s ", role->prefix) : "the ";
    std::replace(whose.begin(), whose.end(), '_', '-');
    return fmt::format("{} is not {}{} in the facts", t.text, whose, q->words[0]);
  }

  bool has_name(const std::string& name) const {
    return names_.contains(name) || names_.contains(lower(name));
  }

 private:
  // `key` is the value's own key, `parent` the one above it (carbon_now for carbon_now.gb).
  void walk(const json& j, const std::string& key, const std::string& parent) {
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) {
        if (k == "sentences") continue;
        names_.insert(k);
        walk(v, lower(k), key);
      }
    } else if (j.is_array()) {
      for (const json& v : j) walk(v, key, parent);
    } else if (j.is_number()) {
      numbers_.push_back({key, j.get<double>()});
      std::string unit = unit_of_key(key);
      if (unit.empty()) unit = unit_of_key(parent);
      if (!unit.empty()) {
        Token t{Token::kNumber, "", j.get<double>(), 0, unit};
        by_unit_[unit].push_back(t);
      }
    } else if (j.is_string()) {
      const std::string s = j.get<std::string>();
      names_.insert(s);
      for (const Token& t : tokenize(s)) {
        if (t.kind == Token::kName || t.kind == Token::kWord) names_.insert(t.text);
      }
    }
  }

  void add_template(const std::string& sentence) {
    for (const Token& t : tokenize(sentence)) {
      if (t.kind == Token::kNumber) {
        template_numbers_.push_back(t);
        if (!t.unit.empty()) by_unit_[t.unit].push_back(t);
      } else if (t.kind == Token::kName || t.kind == Token::kWord) {
        names_.insert(t.text);
      }
    }
  }

  // The unit of a facts key by its suffix ("" when it has none).
  static std::string unit_of_key(const std::string& key) {
    const auto ends = [&key](std::string_view s) {
      return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
    };
    if (ends("_watts")) return "W";
    if (ends("_kw")) return "kW";
    if (ends("_pct")) return "%";
    if (ends("_s")) return "s";
    if (ends("_g")) return "g";
    if (ends("_ci") || ends("_gco2_per_kwh") || key == "carbon_now") return "gCO2/kWh";
    if (ends("_gb")) return "GB";
    return "";
  }

  std::vector<FactNumber> numbers_;
  std::vector<Token> template_numbers_;
  std::map<std::string, std::vector<Token>> by_unit_;
  std::set<std::string> names_;
  std::vector<Role> roles_;
  // What names the chosen node (whose values are those of no role).
  std::set<std::string> chosen_words_{"chosen", "picked", "selected", "winner", "winning"};
  std::set<std::string> chosen_names_;
};

}  // namespace

GuardVerdict check_narration(std::string_view reply, const json& facts,
                             std::string_view finish_reason) {
  GuardVerdict v;
  if (finish_reason != "stop") {
    v.reason = finish_reason.empty()
                   ? "the reply does not say that the model finished (no finish_reason)"
                   : fmt::format("the reply was cut off (finish_reason {})", finish_reason);
    return v;
  }
  // A model may stop on its own halfway through a sentence (an end-of-text token).
  std::string_view end = reply;
  while (!end.empty() && (std::isspace(static_cast<unsigned char>(end.back())) != 0 ||
                          end.back() == '"' || end.back() == '\'' || end.back() == ')' ||
                          end.back() == ']' || end.back() == '*' || end.back() == '`')) {
    end.remove_suffix(1);
  }
  if (!end.empty() && end.back() != '.' && end.back() != '!' && end.back() != '?') {
    v.reason = "the reply stops mid-sentence";
    return v;
  }
  const std::vector<Token> tokens = tokenize(reply);
  if (std::none_of(tokens.begin(), tokens.end(),
                   [](const Token& t) { return t.kind == Token::kWord; })) {
    v.reason = "the reply has no words";
    return v;
  }
  const Index index(facts);
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const Token& t = tokens[k];
    if (t.kind == Token::kName) {
      if (!index.has_name(t.text)) {
        v.reason = fmt::format("{} is not a name in the facts", t.text);
        return v;
      }
      v.used.push_back(t.text);
    } else if (t.kind == Token::kNumber) {
      if (std::string why = index.check_number(t, v.used); !why.empty()) {
        v.reason = std::move(why);
        return v;
      }
      if (std::string why = index.check_quantity(tokens, k); !why.empty()) {
        v.reason = std::move(why);
        return v;
      }
    }
  }
  v.accepted = true;
  v.text = std::string(reply);
  return v;
}

}  // namespace greensched::explain
