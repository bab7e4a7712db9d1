#include "greensched/serve/http_server.hpp"

#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "greensched/core/http_listener.hpp"
#include "greensched/serve/args_reader.hpp"
#include "greensched/serve/gpu_index.hpp"
#include "greensched/serve/json_fields.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Replies may quote request text cut mid-character; never throw on bad UTF-8.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

std::string regex_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// A verb's reply: a JSON value, or JSON text written directly (the hot paths).
struct Reply {
  json body;
  std::string text;
  Reply& operator=(json j) {
    body = std::move(j);
    return *this;
  }
};

// GET /v1/defrag's query: budget (a whole number of moves, 0 to kMaxDefragBudget) and any
// number of exclude=ns/name (or comma lists of them).
constexpr int kMaxDefragBudget = 1000000;

Result<DefragRequest> defrag_request(const httplib::Request& req) {
  DefragRequest out;
  if (!req.has_param("budget")) {
    return Error{"budget: missing; ask GET v1/defrag?budget=N with N moves at most (N >= 0)"};
  }
  if (req.get_param_value_count("budget") > 1) return Error{"budget: given more than once"};
  const std::string text = req.get_param_value("budget");
  if (text.empty() || text.size() > 7 ||
      text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(text) > kMaxDefragBudget) {
    return Error{fmt::format("budget: '{}' is not a whole number of moves from 0 to {}", text,
                             kMaxDefragBudget)};
  }
  out.budget = std::stoi(text);
  for (std::size_t i = 0; i < req.get_param_value_count("exclude"); ++i) {
    const std::string list = req.get_param_value("exclude", i);
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      const std::string key = list.substr(start, comma - start);
      const std::size_t slash = key.find('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == key.size() ||
          key.find('/', slash + 1) != std::string::npos) {
        return Error{fmt::format("exclude: '{}' is not namespace/name", key)};
      }
      out.exclude.insert(key);
      start = comma + 1;
    }
  }
  return out;
}

std::pair<time_t, time_t> split_seconds(double seconds) {
  const double whole = std::floor(seconds);
  return {static_cast<time_t>(whole), static_cast<time_t>((seconds - whole) * 1e6)};
}

}  // namespace

std::string normalise_prefix(std::string_view prefix) {
  std::string out = "/";
  for (char c : prefix) {
    if (c == '/' && out.back() == '/') continue;
    out += c;
  }
  if (out.back() != '/') out += '/';
  return out;
}

ExtenderServer::ExtenderServer(ServerOptions options)
    : options_(std::move(options)), prefix_(normalise_prefix(options_.prefix)) {}

void ExtenderServer::configure() {
  const std::size_t threads = options_.threads > 0 ? static_cast<std::size_t>(options_.threads) : 1;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(options_.max_body_bytes);
  const auto [rs, rus] = split_seconds(options_.read_timeout_seconds);
  server_->set_read_timeout(rs, rus);
  const auto [ws, wus] = split_seconds(options_.write_timeout_seconds);
  server_->set_write_timeout(ws, wus);
  server_->set_keep_alive_timeout(options_.keep_alive_seconds);
  server_->set_keep_alive_max_count(100000);
  // Replies are written in pieces; without this, Nagle's algorithm and delayed ACKs add ~40 ms.
  server_->set_tcp_nodelay(true);
}

ExtenderServer::~ExtenderServer() {
  stop();
}

void ExtenderServer::routes() {
  httplib::Server& s = *server_;

  // A handler for a POST verb: measures, answers 503 before an extender is attached, turns
  // any escaped exception into a 500 with an Error message.
  using VerbFn =
      std::function<std::pair<int, std::string>(Extender&, const std::string& body, Reply& out)>;
  auto verb = [this](std::string name, VerbFn fn) {
    return [this, name = std::move(name), fn = std::move(fn)](const httplib::Request& req,
                                                              httplib::Response& res) {
      const auto start = Clock::now();
      int status = 503;
      std::string outcome = "unavailable";
      Reply out;
      Extender* extender = extender_.load();
      if (extender == nullptr) {
        out = json{{"Error", "greensched is starting (rebuilding its state from the journal)"}};
      } else {
        try {
          std::tie(status, outcome) = fn(*extender, req.body, out);
        } catch (const std::exception& e) {
          status = 500;
          outcome = "internal";
          out = json{{"Error", fmt::format("internal error: {}", e.what())}};
        }
      }
      if (out.text.empty()) {
        reply(res, status, out.body);
      } else {
        res.status = status;
        res.set_content(std::move(out.text), "application/json");
      }
      metrics_.observe(name, status, outcome,
                       std::chrono::duration<double>(Clock::now() - start).count());
    };
  };

  s.Post(prefix_ + "filter",
         verb("filter", [this](Extender& ext, const std::string& body, Reply& out) {
           auto args = read_extender_args(body);
           if (!args.ok()) {
             out = filter_error_json(args.error());
             return std::make_pair(400, std::string("bad_request"));
           }
           FilterResult result = ext.filter(args.value());
           metrics_.observe_filter(result.reason_counts,
                                   result.passed.empty() && !args.value().node_names.empty());
           out.text = filter_result_text(result, args.value());
           return std::make_pair(200, std::string(result.error.empty() ? "ok" : "error"));
         }));

  s.Post(prefix_ + "prioritize",
         verb("prioritize", [](Extender& ext, const std::string& body, Reply& out) {
           auto args = read_extender_args(body);
           if (!args.ok()) {
             out = json{{"Error", args.error()}};
             return std::make_pair(400, std::string("bad_request"));
           }
           out.text = priority_list_text(ext.prioritize(args.value()));
           return std::make_pair(200, std::string("ok"));
         }));

  s.Post(prefix_ + "bind", verb("bind", [](Extender& ext, const std::string& body, Reply& out) {
           auto parsed = parse_request_json(body);
           if (!parsed.ok()) {
             out = json{{"Error", parsed.error()}};
             return std::make_pair(400, std::string("bad_request"));
           }
           auto args = parse_binding_args(parsed.value());
           if (!args.ok()) {
             out = json{{"Error", args.error()}};
             return std::make_pair(400, std::string("bad_request"));
           }
           BindOutcome o = ext.bind(args.value());
           json annotations = json::object();
           if (o.error.empty() && !o.gpu_index.empty()) {
             annotations[std::string(kGpuIndexAnnotation)] = o.gpu_index;
           }
           out = json{{"Error", o.error}, {"Annotations", std::move(annotations)}};
           return std::make_pair(200, std::string(o.error.empty() ? "ok" : "error"));
         }));

  s.Post(
      prefix_ + "release", verb("release", [](Extender& ext, const std::string& body, Reply& out) {
        auto parsed = parse_request_json(body);
        if (!parsed.ok()) {
          out = json{{"Error", parsed.error()}, {"released", false}};
          return std::make_pair(400, std::string("bad_request"));
        }
        auto ref = parse_release_args(parsed.value());
        if (!ref.ok()) {
          out = json{{"Error", ref.error()}, {"released", false}};
          return std::make_pair(400, std::string("bad_request"));
        }
        ReleaseOutcome o = ext.release(ref.value());
        out = json{{"Error", o.error}, {"released", o.error.empty()}};
        std::string outcome = o.error.empty() ? "ok" : o.http_status == 404 ? "not_found" : "error";
        return std::make_pair(o.http_status, std::move(outcome));
      }));

  s.Post(prefix_ + "resync", verb("resync", [](Extender& ext, const std::string& body, Reply& out) {
           auto parsed = parse_request_json(body);
           if (!parsed.ok()) {
             out = json{{"Error", parsed.error()}};
             return std::make_pair(400, std::string("bad_request"));
           }
           auto pods = parse_resync(parsed.value());
           if (!pods.ok()) {
             out = json{{"Error", pods.error()}};
             return std::make_pair(400, std::string("bad_request"));
           }
           ResyncOutcome o = ext.resync(std::move(pods.value()));
           json errors = json::array();
           for (const auto& [pod, error] : o.errors)
             errors.push_back(json{{"pod", pod}, {"error", error}});
           out = json{{"Error", o.error},
                      {"added", o.added},
                      {"removed", o.removed},
                      {"unchanged", o.unchanged},
                      {"errors", std::move(errors)}};
           if (!o.error.empty()) return std::make_pair(503, std::string("unavailable"));
           return std::make_pair(200, std::string(o.errors.empty() ? "ok" : "error"));
         }));

  s.Get(prefix_ + "pods", [this](const httplib::Request&, httplib::Response& res) {
    Extender* extender = extender_.load();
    if (extender == nullptr) return reply(res, 503, json{{"Error", "starting"}});
    reply(res, 200, extender->pods());
  });
  s.Get(regex_escape(prefix_) + "pods/([^/]+)/([^/]+)",
        [this](const httplib::Request& req, httplib::Response& res) {
          Extender* extender = extender_.load();
          if (extender == nullptr) return reply(res, 503, json{{"Error", "starting"}});
          auto pod = extender->pod(req.matches[1].str(), req.matches[2].str());
          if (!pod) {
            return reply(res, 404,
                         json{{"Error", fmt::format("pod {}/{} holds no allocation",
                                                    req.matches[1].str(), req.matches[2].str())}});
          }
          reply(res, 200, *pod);
        });

  // The defragmentation plan (serve/defrag.cpp): read-only, secured as the other reads.
  s.Get(prefix_ + "v1/defrag", [this](const httplib::Request& req, httplib::Response& res) {
    const auto start = Clock::now();
    int status = 200;
    std::string outcome = "ok";
    json body;
    Extender* extender = extender_.load();
    if (extender == nullptr) {
      status = 503;
      outcome = "unavailable";
      body = json{{"Error", "greensched is starting (rebuilding its state from the journal)"}};
    } else if (auto request = defrag_request(req); !request.ok()) {
      status = 400;
      outcome = "bad_request";
      body = json{{"Error", request.error()}};
    } else {
      try {
        auto plan = extender->defrag(request.value());
        if (plan.ok()) {
          body = std::move(plan.value());
        } else {
          status = 500;
          outcome = "internal";
          body = json{{"Error", plan.error()}};
        }
      } catch (const std::exception& e) {
        status = 500;
        outcome = "internal";
        body = json{{"Error", fmt::format("internal error: {}", e.what())}};
      }
    }
    reply(res, status, body);
    metrics_.observe("defrag", status, outcome,
                     std::chrono::duration<double>(Clock::now() - start).count());
  });

  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    Extender* extender = extender_.load();
    res.status = 200;
    std::string text = "ok\n";
    if (extender == nullptr) {
      res.status = 503;
      text = "starting: rebuilding state from the journal\n";
    } else if (Status h = extender->health(); !h.ok()) {
      res.status = 503;
      text = h.message() + "\n";
    }
    res.set_content(text, "text/plain");
  });

  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    Extender* extender = extender_.load();
    StateGauges gauges;
    if (extender != nullptr) gauges = extender->gauges();
    res.set_content(metrics_.render(gauges, extender != nullptr && extender->health().ok()),
                    "text/plain; version=0.0.4");
  });

  // Errors httplib produces itself (413 body too large, 400 malformed HTTP, 404 no route)
  // get a JSON body with an Error message too.
  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message;
    if (res.status == 413) {
      message = fmt::format("request body over {} bytes", options_.max_body_bytes);
    } else if (res.status == 404) {
      message = fmt::format("no such endpoint: {} {} (verbs live under {})", req.method, req.path,
                            prefix_);
    } else {
      message = fmt::format("HTTP {}", res.status);
    }
    reply(res, res.status, json{{"Error", message}});
  });
}

Result<int> ExtenderServer::start(const std::string& host, int port) {
  if (server_) return Error{"the extender server is already started", ErrorCode::kInternal};
  auto exposure = check_exposure(host, options_.security);
  if (!exposure.ok()) return Error{exposure.error()};
  GuardOptions guard;
  guard.error_key = "Error";  // as the extender protocol's replies
  auto made = make_listener(options_.security, guard);
  if (!made.ok()) return Error{made.error(), made.code()};
  server_ = std::move(made.value());
  configure();
  routes();
  return start_http(*server_, thread_, host, port);
}

void ExtenderServer::stop() {
  stop_http(server_.get(), thread_);
}

}  // namespace greensched::serve
