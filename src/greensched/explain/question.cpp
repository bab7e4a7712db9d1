#include "greensched/explain/question.hpp"

#include <cctype>

#include "greensched/explain/explanation.hpp"

namespace greensched::explain {
namespace {

using nlohmann::json;

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '/' ||
         c == '.';
}

bool named(const json& value, const std::set<std::string>& names) {
  return value.is_string() && names.contains(value.get<std::string>());
}

// A node's name in a fleet record is SITE/NODE: the node alone counts too.
bool names_node(const json& value, const std::set<std::string>& names) {
  if (named(value, names)) return true;
  if (!value.is_string()) return false;
  const std::string s = value.get<std::string>();
  const std::size_t slash = s.rfind('/');
  return slash != std::string::npos && names.contains(s.substr(slash + 1));
}

}  // namespace

std::set<std::string> question_names(std::string_view question) {
  std::set<std::string> out;
  for (std::size_t i = 0; i < question.size();) {
    if (!name_char(question[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < question.size() && name_char(question[end])) ++end;
    std::string word(question.substr(i, end - i));
    while (!word.empty() && word.back() == '.') word.pop_back();
    bool digit = false, dash = false, alpha = false;
    for (char c : word) {
      digit |= std::isdigit(static_cast<unsigned char>(c)) != 0;
      alpha |= std::isalpha(static_cast<unsigned char>(c)) != 0;
      dash |= c == '-' || c == '/' || c == '_';
    }
    if (alpha && (digit || dash)) out.insert(word);
    i = end;
  }
  return out;
}

int question_match(const json& record, const std::set<std::string>& names) {
  if (record.contains("pod") && named(record["pod"], names)) return 2;
  // A drain: the pods it moved, then the node it emptied.
  if (record.contains("moves") && record["moves"].is_array()) {
    for (const json& m : record["moves"]) {
      if (m.is_object() && m.contains("pod") && named(m["pod"], names)) return 2;
    }
  }
  for (const char* key : {"chosen_node", "runner_up", "home_site", "site", "node"}) {
    if (record.contains(key) && names_node(record[key], names)) return 1;
  }
  for (const char* list : {"candidates", "alternatives"}) {
    if (!record.contains(list) || !record[list].is_array()) continue;
    for (const json& c : record[list]) {
      for (const char* key : {"node", "site"}) {
        if (c.is_object() && c.contains(key) && names_node(c[key], names)) return 1;
      }
    }
  }
  return 0;
}

json question_facts(std::string_view question, const std::vector<json>& records) {
  if (records.size() == 1) {
    json facts = explain_facts(records.front());
    facts["question"] = std::string(question);
    return facts;
  }
  json sentences = json::array();
  json decisions = json::array();
  for (const json& r : records) {
    json facts = explain_facts(r);
    for (const json& s : facts["sentences"]) sentences.push_back(s);
    facts.erase("sentences");
    decisions.push_back(std::move(facts));
  }
  return {{"question", std::string(question)},
          {"sentences", std::move(sentences)},
          {"decisions", std::move(decisions)}};
}

}  // namespace greensched::explain
