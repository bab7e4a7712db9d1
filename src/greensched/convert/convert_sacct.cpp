// Slurm sacct / scontrol text to openb lists; see convert_sacct.hpp.
#include "greensched/convert/convert_sacct.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "greensched/convert/convert_kubectl.hpp"
#include "greensched/convert/gpu_names.hpp"
#include "greensched/convert/openb_writer.hpp"
#include "greensched/core/gpu_model.hpp"
#include "greensched/core/resources.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::convert {
namespace {

// The most CPUs one node or job may claim (2^20): far beyond any machine, and small enough that
// milli-CPUs stay far from int64's range.
constexpr int64_t kMaxCpus = int64_t{1} << 20;

struct Line {
  std::size_t number = 0;
  std::string_view text;
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> out;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(Line{number, line});
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const std::size_t at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// "64G", "500M", "1.50T", "4000" (MiB) -> MiB, rounded up; nullopt when malformed.
std::optional<int64_t> slurm_mib(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double scale = 1;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = 1.0 / 1024;
      break;
    case 'M':
    case 'm':
      break;
    case 'G':
    case 'g':
      scale = 1024;
      break;
    case 'T':
    case 't':
      scale = 1024.0 * 1024;
      break;
    case 'P':
    case 'p':
      scale = 1024.0 * 1024 * 1024;
      break;
    default:
      scale = 0;
  }
  if (scale != 0) {
    text.remove_suffix(1);
  } else {
    scale = 1;
  }
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return std::nullopt;
  }
  const std::string number(text);
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !(v >= 0) || v * scale > 1e15) return std::nullopt;
  return static_cast<int64_t>(std::ceil(v * scale - 1e-9));
}

// A TRES list "billing=8,cpu=8,gres/gpu:a100=2,mem=64G,node=1".
struct Tres {
  std::optional<int64_t> cpu;
  std::optional<int64_t> mem_mib;
  std::optional<int64_t> nodes;
  std::optional<int64_t> gpus;                // gres/gpu=N
  std::map<std::string, int64_t> gpu_models;  // gres/gpu:MODEL=N
};

Result<Tres> parse_tres(std::string_view text, std::string_view column) {
  Tres out;
  if (text.empty()) return out;
  for (std::string_view item : split(text, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Error{fmt::format("{}: '{}' is not KEY=VALUE", column, item)};
    }
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    const auto count = [&]() -> Result<int64_t> {
      auto v = trace::parse_int(value);
      if (!v || *v < 0)
        return Error{fmt::format("{}: {}: '{}' is not a count", column, key, value)};
      return *v;
    };
    if (key == "cpu" || key == "node" || key == "gres/gpu") {
      auto v = count();
      if (!v.ok()) return Error{v.error()};
      (key == "cpu" ? out.cpu : key == "node" ? out.nodes : out.gpus) = v.value();
    } else if (key.starts_with("gres/gpu:")) {
      auto v = count();
      if (!v.ok()) return Error{v.error()};
      if (v.value() > 0) out.gpu_models[std::string(key.substr(9))] += v.value();
    } else if (key == "mem") {
      auto v = slurm_mib(value);
      if (!v) return Error{fmt::format("{}: mem: '{}' is not a size", column, value)};
      out.mem_mib = *v;
    }
  }
  return out;
}

// A Slurm time stamp; nullopt for "Unknown", "None" or empty.
Result<std::optional<int64_t>> slurm_time(std::string_view text, std::string_view column) {
  if (text.empty() || text == "Unknown" || text == "None") return std::optional<int64_t>{};
  auto t = parse_utc_time(text);
  if (!t.ok()) return Error{fmt::format("{}: {}", column, t.error())};
  return std::optional<int64_t>{t.value()};
}

std::string drop_summary(const TableSummary& t) {
  return t.drops.empty() ? std::string()
                         : fmt::format("; first dropped: {}: {}", t.drops.front().where(),
                                       t.drops.front().what);
}

// ---- scontrol show node -o ----------------------------------------------------------------

// "NodeName=a CPUTot=64 OS=Linux 5.15 Gres=gpu:a100:4(S:0-1)" -> key -> value (a token without
// '=' continues the previous value).
std::unordered_map<std::string, std::string> node_fields(std::string_view line) {
  std::unordered_map<std::string, std::string> out;
  std::string* last = nullptr;
  for (std::string_view token : split(line, ' ')) {
    if (token.empty()) continue;
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      if (last != nullptr) *last += fmt::format(" {}", token);
      continue;
    }
    last = &(out[std::string(token.substr(0, eq))] = std::string(token.substr(eq + 1)));
  }
  return out;
}

// "gpu:a100:4(S:0-1),gpu:v100:2,mps:100" -> GPU count by model ("" when untyped).
Result<std::map<std::string, int64_t>> gres_gpus(std::string_view gres) {
  std::map<std::string, int64_t> out;
  if (gres.empty() || gres == "(null)") return out;
  std::vector<std::string_view> items;
  int paren = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= gres.size(); ++i) {
    if (i == gres.size() || (gres[i] == ',' && paren == 0)) {
      items.push_back(gres.substr(start, i - start));
      start = i + 1;
    } else if (gres[i] == '(') {
      ++paren;
    } else if (gres[i] == ')') {
      --paren;
    }
  }
  for (std::string_view item : items) {
    item = item.substr(0, item.find('('));
    std::vector<std::string_view> parts = split(item, ':');
    if (parts.front() != "gpu") continue;
    int64_t count = 1;
    std::string model;
    if (parts.size() >= 2) {
      if (auto n = trace::parse_int(parts.back())) {
        count = *n;
        parts.pop_back();
      }
    }
    if (parts.size() >= 2) model = std::string(parts[1]);
    if (count < 0) return Error{fmt::format("Gres: '{}': negative count", item)};
    if (count > 0) out[model] += count;
  }
  return out;
}

Result<std::vector<OpenbNodeRow>> convert_scontrol_nodes(const SourceText& src, TableSummary& table,
                                                         const GpuModelMap& models) {
  const std::vector<Line> lines = split_lines(src.text);
  bool any = false;
  for (const Line& l : lines) {
    if (trim(l.text).empty()) continue;
    if ((l.text.front() == ' ' || l.text.front() == '\t') &&
        trim(l.text).find('=') != std::string_view::npos) {
      return Error{fmt::format(
          "{}:{}: a node continues on this line: give `scontrol show node -o` (one node a line)",
          src.path, l.number)};
    }
    any = any || trim(l.text).starts_with("NodeName=");
  }
  if (!any) {
    return Error{
        fmt::format("{}:1: no NodeName= line: expected `scontrol show node -o` output", src.path)};
  }
  std::vector<OpenbNodeRow> rows;
  std::unordered_map<std::string, std::size_t> first_line;
  for (const Line& l : lines) {
    const std::string_view text = trim(l.text);
    if (text.empty()) continue;
    if (!text.starts_with("NodeName=")) {
      table.drop(l.number, "not a node: the line does not start with NodeName=");
      continue;
    }
    auto f = node_fields(text);
    OpenbNodeRow row;
    row.name = f["NodeName"];
    std::vector<std::string> inferred;
    const auto number = [&](const char* key) -> std::optional<int64_t> {
      auto it = f.find(key);
      if (it == f.end()) return std::nullopt;
      auto v = trace::parse_int(it->second);
      if (!v || *v < 0) return std::nullopt;
      return v;
    };
    const auto cpus = number("CPUTot");
    const auto mem = number("RealMemory");
    if (row.name.empty() || !plain_field(row.name)) {
      table.drop(l.number, fmt::format("NodeName '{}': empty or holds , \" or |", row.name));
      continue;
    }
    if (!cpus || !mem) {
      table.drop(l.number, fmt::format("node {}: {} missing or not a count", row.name,
                                       !cpus ? "CPUTot" : "RealMemory"));
      continue;
    }
    if (*cpus > kMaxCpus) {
      table.drop(l.number, fmt::format("node {}: CPUTot {} is over {}", row.name, *cpus, kMaxCpus));
      continue;
    }
    row.cpu_milli = *cpus * 1000;
    row.memory_mib = *mem;
    auto gpus = gres_gpus(f["Gres"]);
    if (!gpus.ok()) {
      table.drop(l.number, fmt::format("node {}: {}", row.name, gpus.error()));
      continue;
    }
    int64_t total = 0;
    std::pair<std::string, int64_t> most{"", 0};
    for (const auto& [model, n] : gpus.value()) {
      total += n;
      if (n > most.second) most = {model, n};
    }
    if (total > kMaxGpusPerNode) {
      table.drop(l.number, fmt::format("node {}: {} GPUs; at most {} per node are supported",
                                       row.name, total, kMaxGpusPerNode));
      continue;
    }
    row.gpu = static_cast<int>(total);
    if (total > 0) {
      row.model = most.first;
      if (gpus.value().size() > 1) {
        inferred.push_back(fmt::format("GPU model {} for all {} GPUs: Gres {} mixes models",
                                       most.first, total, f["Gres"]));
      }
      if (const std::string canonical = converted_gpu_model(row.model, models);
          !row.model.empty() && canonical != row.model) {
        inferred.push_back(fmt::format("GPU model {} from Gres '{}'", canonical, row.model));
        row.model = canonical;
      }
      if (row.model.empty()) {
        row.model = converted_gpu_model(kUnlabelledModel, models);
        inferred.push_back(
            row.model == kUnlabelledModel
                ? fmt::format("GPU model '{}': Gres {} names none (name it with --gpu-model "
                              "{}=MODEL)",
                              kUnlabelledModel, f["Gres"], kUnlabelledModel)
                : fmt::format("GPU model {} by --gpu-model {}={}: Gres {} names none", row.model,
                              kUnlabelledModel, row.model, f["Gres"]));
      }
      if (!plain_field(row.model)) {
        table.drop(l.number,
                   fmt::format("node {}: GPU model '{}' holds , \" or |", row.name, row.model));
        continue;
      }
    }
    if (const auto [it, fresh] = first_line.try_emplace(row.name, l.number); !fresh) {
      table.drop(l.number,
                 fmt::format("duplicate node {} (first on line {})", row.name, it->second));
      continue;
    }
    rows.push_back(std::move(row));
    table.keep(l.number, inferred);
  }
  if (rows.empty()) {
    return Error{fmt::format("{}: no node could be converted ({} line(s){})", src.path, table.rows,
                             drop_summary(table))};
  }
  return rows;
}

// ---- sacct --parsable2 ----------------------------------------------------------------------

struct JobDraft {
  std::size_t line = 0;
  std::vector<OpenbPodRow> pods;  // one per node the job ran on
  int64_t submitted = 0;
  std::optional<int64_t> started;
  std::optional<int64_t> ended;
  std::vector<std::string> inferred;
};

class Columns {
 public:
  explicit Columns(const std::vector<std::string_view>& header) {
    for (std::size_t i = 0; i < header.size(); ++i) index_.emplace(lower(trim(header[i])), i);
  }
  std::optional<std::size_t> find(std::string_view name) const {
    auto it = index_.find(lower(name));
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::unordered_map<std::string, std::size_t> index_;
};

std::string phase_of(std::string_view state) {
  state = state.substr(0, state.find(' '));  // "CANCELLED by 1000"
  if (state == "PENDING") return "Pending";
  if (state == "RUNNING" || state == "REQUEUED" || state == "RESIZING" || state == "SUSPENDED")
    return "Running";
  if (state == "COMPLETED") return "Succeeded";
  return "Failed";
}

Result<std::vector<OpenbPodRow>> convert_jobs(const SourceText& src,
                                              const std::vector<OpenbNodeRow>* nodes,
                                              TableSummary& table, std::vector<std::string>& notes,
                                              const GpuModelMap& model_map) {
  const std::vector<Line> lines = split_lines(src.text);
  std::size_t h = 0;
  while (h < lines.size() && trim(lines[h].text).empty()) ++h;
  if (h == lines.size()) {
    return Error{fmt::format("{}:1: empty file (expected `sacct --parsable2` output)", src.path)};
  }
  std::vector<std::string_view> header = split(lines[h].text, '|');
  const bool trailing_bar = header.size() > 1 && header.back().empty();  // --parsable
  if (trailing_bar) header.pop_back();
  const Columns cols(header);
  const auto c_id = cols.find("JobID");
  const auto c_submit = cols.find("Submit");
  if (!c_id || !c_submit) {
    return Error{fmt::format(
        "{}:{}: no sacct header: expected a '|'-separated line naming JobID and Submit (run "
        "sacct --parsable2 with --format including JobID,Submit,Start,End,State,AllocCPUS,"
        "ReqMem,AllocTRES), got '{}'",
        src.path, lines[h].number, lines[h].text.substr(0, 120))};
  }
  const auto c_start = cols.find("Start");
  const auto c_end = cols.find("End");
  const auto c_state = cols.find("State");
  const auto c_alloc_cpus = cols.find("AllocCPUS");
  const auto c_req_cpus = cols.find("ReqCPUS");
  const auto c_req_mem = cols.find("ReqMem");
  const auto c_alloc_tres = cols.find("AllocTRES");
  const auto c_req_tres = cols.find("ReqTRES");
  const auto c_nnodes = cols.find("NNodes");

  GpuModelRegistry known;
  if (nodes != nullptr) {
    for (const OpenbNodeRow& r : *nodes) {
      if (r.gpu > 0) (void)known.intern(r.model);
    }
  }
  std::vector<JobDraft> drafts;
  std::unordered_map<std::string, std::size_t> first_line;
  int64_t dump_end = std::numeric_limits<int64_t>::min();
  for (std::size_t li = h + 1; li < lines.size(); ++li) {
    const Line& l = lines[li];
    if (trim(l.text).empty()) continue;
    std::vector<std::string_view> f = split(l.text, '|');
    if (trailing_bar && f.size() == header.size() + 1 && f.back().empty()) f.pop_back();
    if (f.size() != header.size()) {
      table.drop(l.number, fmt::format("expected {} '|'-separated fields as in the header, got {}",
                                       header.size(), f.size()));
      continue;
    }
    const auto field = [&](std::optional<std::size_t> c) {
      return c ? trim(f[*c]) : std::string_view();
    };
    const std::string_view id = field(c_id);
    if (id.empty()) {
      table.drop(l.number, "JobID: empty");
      continue;
    }
    if (id.find('.') != std::string_view::npos) {
      table.skip("job steps: their job's own line counts");
      continue;
    }
    JobDraft d;
    d.line = l.number;
    std::string name(id);
    if (!plain_field(name)) {
      std::replace_if(
          name.begin(), name.end(), [](char c) { return c == ',' || c == '|' || c == '"'; }, '+');
      d.inferred.push_back(fmt::format("name {}: JobID {} holds , | or \"", name, id));
    }
    if (name.find('[') != std::string::npos) {
      d.inferred.push_back("one pod for a pending job array record (its tasks not expanded)");
    }
    std::string phase;
    if (c_state) {
      phase = phase_of(field(c_state));
    }
    // Times.
    auto submitted = slurm_time(field(c_submit), "Submit");
    if (!submitted.ok() || !submitted.value()) {
      table.drop(l.number, submitted.ok() ? "Submit: no time" : submitted.error());
      continue;
    }
    d.submitted = *submitted.value();
    if (phase != "Pending") {
      auto started = slurm_time(field(c_start), "Start");
      auto ended = slurm_time(field(c_end), "End");
      if (!started.ok() || !ended.ok()) {
        table.drop(l.number, !started.ok() ? started.error() : ended.error());
        continue;
      }
      d.started = started.value();
      d.ended = ended.value();
    }
    if (phase.empty()) {
      phase = !d.started ? "Pending" : !d.ended ? "Running" : "Succeeded";
      d.inferred.push_back(fmt::format("pod_phase {}: no State column", phase));
    }
    if (d.ended && *d.ended < d.submitted) {
      table.drop(l.number, fmt::format("ends ({}) before its submission ({})",
                                       format_utc_time(*d.ended), format_utc_time(d.submitted)));
      continue;
    }
    // Resources.
    // AllocTRES, else ReqTRES (a pending job has no allocation).
    std::optional<std::size_t> c_tres;
    for (const auto& c : {c_alloc_tres, c_req_tres}) {
      if (c && !field(c).empty()) {
        c_tres = c;
        break;
      }
    }
    auto parsed = c_tres ? parse_tres(field(c_tres), header[*c_tres]) : Result<Tres>(Tres{});
    if (!parsed.ok()) {
      table.drop(l.number, parsed.error());
      continue;
    }
    const Tres* tres = &parsed.value();
    int64_t cpus = 0;
    for (const auto& c : {c_alloc_cpus, c_req_cpus}) {
      if (auto v = trace::parse_int(field(c)); v && *v > 0) {
        cpus = *v;
        break;
      }
    }
    if (cpus == 0 && tres->cpu && *tres->cpu > 0) cpus = *tres->cpu;
    if (cpus == 0) {
      cpus = 1;
      d.inferred.push_back("1 CPU: no AllocCPUS, ReqCPUS or TRES cpu");
    }
    if (cpus > kMaxCpus) {
      table.drop(l.number, fmt::format("{} CPUs is over {}", cpus, kMaxCpus));
      continue;
    }
    int64_t job_nodes = 1;
    if (auto v = trace::parse_int(field(c_nnodes)); v && *v > 0) {
      job_nodes = *v;
    } else if (tres->nodes && *tres->nodes > 0) {
      job_nodes = *tres->nodes;
    }
    if (job_nodes > 4096) {
      table.drop(l.number, fmt::format("{} nodes: more than 4096", job_nodes));
      continue;
    }
    int64_t mem_per_node = 0;
    if (tres->mem_mib) {
      mem_per_node = ceil_div(*tres->mem_mib, job_nodes);
    } else if (!field(c_req_mem).empty()) {
      std::string_view m = field(c_req_mem);
      int64_t times = 1;  // per node: a pod's share
      if (m.back() == 'c') {
        times = ceil_div(cpus, job_nodes);
        m.remove_suffix(1);
      } else if (m.back() == 'n') {
        m.remove_suffix(1);
      }
      auto v = slurm_mib(m);
      if (!v) {
        table.drop(l.number, fmt::format("ReqMem: '{}' is not a size", field(c_req_mem)));
        continue;
      }
      mem_per_node = *v * times;
    } else {
      d.inferred.push_back("memory 0: no TRES mem or ReqMem");
    }
    int64_t gpus = tres->gpus.value_or(0);
    if (!tres->gpus) {
      for (const auto& [model, n] : tres->gpu_models) gpus += n;
    }
    std::vector<std::string> models;
    std::vector<std::string> unknown;
    for (const auto& [raw, n] : tres->gpu_models) {
      const std::string model = converted_gpu_model(raw, model_map);
      if (model != raw)
        d.inferred.push_back(fmt::format("GPU model {} from gres/gpu:{}", model, raw));
      // Without a node list, a model must be one the simulator knows (GpuModelRegistry's).
      if (!plain_field(model) || !known.find(model)) {
        unknown.push_back(model);
      } else {
        models.push_back(model);
      }
    }
    if (gpus > 0 && !unknown.empty() && models.empty()) {
      table.drop(l.number,
                 fmt::format("asks only for GPU model(s) {}: {}",
                             nodes != nullptr ? "no node has" : "the simulator does not know",
                             fmt::join(unknown, "|")));
      continue;
    }
    if (gpus > 0 && !unknown.empty()) {
      d.inferred.push_back(
          fmt::format("gpu_spec {}: left out model(s) {}: {}", fmt::join(models, "|"),
                      nodes != nullptr ? "no node has" : "the simulator does not know",
                      fmt::join(unknown, "|")));
    }
    const int64_t gpus_per_node = ceil_div(gpus, job_nodes);
    if (gpus_per_node > kMaxGpusPerNode) {
      table.drop(l.number, fmt::format("{} GPUs on one node; at most {} per node are supported",
                                       gpus_per_node, kMaxGpusPerNode));
      continue;
    }
    if (job_nodes > 1) {
      const bool even = cpus % job_nodes == 0 && gpus % job_nodes == 0;
      d.inferred.push_back(fmt::format(
          "ran on {} nodes: written as {} pods {}/0..{}/{}, each with {} of the job's CPUs, "
          "memory and GPUs",
          job_nodes, job_nodes, name, name, job_nodes - 1,
          even ? fmt::format("1/{}", job_nodes) : fmt::format("1/{} (rounded up)", job_nodes)));
    }
    if (const auto [it, fresh] = first_line.try_emplace(name, l.number); !fresh) {
      table.drop(l.number, fmt::format("duplicate job {} (first on line {})", name, it->second));
      continue;
    }
    for (int64_t k = 0; k < job_nodes; ++k) {
      OpenbPodRow p;
      p.name = job_nodes > 1 ? fmt::format("{}/{}", name, k) : name;
      p.cpu_milli = ceil_div(cpus, job_nodes) * 1000;
      p.memory_mib = mem_per_node;
      p.num_gpu = static_cast<int>(gpus_per_node);
      p.gpu_milli = gpus_per_node > 0 ? kGpuMilli : 0;
      if (gpus_per_node > 0) p.gpu_spec = models;
      p.phase = phase;
      d.pods.push_back(std::move(p));
    }
    dump_end = std::max(
        {dump_end, d.submitted, d.started.value_or(d.submitted), d.ended.value_or(d.submitted)});
    drafts.push_back(std::move(d));
  }
  if (drafts.empty()) {
    return Error{fmt::format("{}: no job could be converted ({} row(s){})", src.path, table.rows,
                             drop_summary(table))};
  }
  int64_t origin = drafts.front().submitted;
  for (const JobDraft& d : drafts) origin = std::min(origin, d.submitted);
  notes.push_back(
      "Slurm's time stamps (Submit, Start, End) have no time zone: they are read as UTC");
  notes.push_back(fmt::format(
      "times are seconds from the earliest Submit, {}; a job that has not ended ends at the "
      "file's last time stamp, {} (+{} s)",
      format_utc_time(origin), format_utc_time(dump_end), dump_end - origin));
  notes.push_back("qos is left empty: Slurm's QOS names have no openb class");
  std::vector<OpenbPodRow> rows;
  for (JobDraft& d : drafts) {
    int64_t ended = dump_end;
    if (d.ended) {
      ended = *d.ended;
    } else {
      d.inferred.push_back(fmt::format("deletion_time {}: {} (not ended), the file's end",
                                       dump_end - origin, d.pods.front().phase));
    }
    if (d.started && *d.started < d.submitted) {
      d.inferred.push_back("scheduled_time: Start is before Submit; set to Submit");
    }
    for (OpenbPodRow& p : d.pods) {
      p.creation_time = d.submitted - origin;
      p.deletion_time = ended - origin;
      if (d.started) p.scheduled_time = std::max(*d.started, d.submitted) - origin;
      rows.push_back(std::move(p));
    }
    table.keep(d.line, d.inferred);
  }
  return rows;
}

}  // namespace

Result<ConvertOutput> convert_sacct(const SourceText& jobs, const std::optional<SourceText>& nodes,
                                    const GpuModelMap& models) {
  ConvertOutput out;
  out.summary.source = "sacct";
  std::optional<std::vector<OpenbNodeRow>> node_rows;
  if (nodes) {
    TableSummary node_table;
    node_table.what = "nodes";
    node_table.source = nodes->path;
    auto rows = convert_scontrol_nodes(*nodes, node_table, models);
    if (!rows.ok()) return Error{rows.error()};
    node_rows = std::move(rows.value());
    out.nodes_csv = openb_nodes_csv(*node_rows);
    if (std::string note = power_note(models_without_power(*node_rows)); !note.empty())
      out.summary.notes.push_back(std::move(note));
    node_table.sort_notes();
    out.summary.tables.push_back(std::move(node_table));
  }
  TableSummary pod_table;
  pod_table.what = "pods";
  pod_table.source = jobs.path;
  auto pods =
      convert_jobs(jobs, node_rows ? &*node_rows : nullptr, pod_table, out.summary.notes, models);
  if (!pods.ok()) return Error{pods.error()};
  out.pods_csv = openb_pods_csv(pods.value());
  pod_table.sort_notes();
  out.summary.tables.push_back(std::move(pod_table));
  return out;
}

}  // namespace greensched::convert
