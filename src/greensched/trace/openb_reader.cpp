#include "greensched/trace/openb_reader.hpp"

#include <array>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "greensched/core/resources.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/trace/csv.hpp"

namespace greensched::trace {
namespace {

// Looks up required columns by name; the error lists what is missing.
template <std::size_t N>
Result<std::array<std::size_t, N>> require_columns(const CsvReader& csv,
                                                   const std::array<const char*, N>& names) {
  std::array<std::size_t, N> idx{};
  std::string missing;
  for (std::size_t i = 0; i < N; ++i) {
    if (auto c = csv.column(names[i])) {
      idx[i] = *c;
    } else {
      missing += missing.empty() ? names[i] : fmt::format(", {}", names[i]);
    }
  }
  if (!missing.empty()) {
    return Error{fmt::format("{}:1: missing column(s): {} (header: {})", csv.source(), missing,
                             fmt::join(csv.header(), ","))};
  }
  return idx;
}

// Parses a non-negative integer field; on failure fills `err`.
std::optional<int64_t> field_int(const CsvReader& csv, std::size_t col, const char* name,
                                 std::optional<Error>& err) {
  const std::string_view f = csv.fields()[col];
  auto v = parse_int(f);
  if (!v) {
    err = csv.error(fmt::format("{}: '{}' is not an integer", name, f));
    return std::nullopt;
  }
  if (*v < 0) {
    err = csv.error(fmt::format("{}: {} is negative", name, *v));
    return std::nullopt;
  }
  return v;
}

Status check_field_count(const CsvReader& csv) {
  if (csv.fields().size() != csv.header().size()) {
    return csv.error(fmt::format("expected {} fields as in the header, got {}", csv.header().size(),
                                 csv.fields().size()));
  }
  return Status::Ok();
}

// Remembers the line of each name; a second row with the same name is an error naming both,
// as a node or pod name is the key every later step looks rows up by.
class NameLines {
 public:
  explicit NameLines(const char* what) : what_(what) {}
  Status add(const CsvReader& csv, const std::string& name) {
    const auto [it, inserted] = first_.try_emplace(name, csv.line_number());
    if (inserted) return Status::Ok();
    return csv.error(fmt::format("duplicate {} '{}' (first on line {})", what_, name, it->second));
  }

 private:
  const char* what_;
  std::unordered_map<std::string, std::size_t> first_;
};

}  // namespace

Result<std::vector<NodeSpec>> parse_openb_nodes(std::string_view text, const std::string& source,
                                                GpuModelRegistry& models) {
  CsvReader csv(text, source);
  if (Status s = csv.read_header(); !s.ok()) return s.error();
  auto cols = require_columns<5>(csv, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!cols.ok()) return Error{cols.error()};
  const auto [c_sn, c_cpu, c_mem, c_gpu, c_model] = cols.value();

  std::vector<NodeSpec> nodes;
  NameLines names("node name");
  while (csv.next()) {
    if (Status s = check_field_count(csv); !s.ok()) return s.error();
    std::optional<Error> err;
    NodeSpec node;
    node.name = std::string(csv.fields()[c_sn]);
    if (node.name.empty()) return csv.error("sn: empty node name");
    if (Status s = names.add(csv, node.name); !s.ok()) return s.error();
    auto cpu = field_int(csv, c_cpu, "cpu_milli", err);
    auto mem = field_int(csv, c_mem, "memory_mib", err);
    auto gpu = field_int(csv, c_gpu, "gpu", err);
    if (err) return *err;
    node.cpu_milli = *cpu;
    node.memory_mib = *mem;
    if (*gpu > kMaxGpusPerNode) {
      return csv.error(
          fmt::format("gpu: {} GPUs on one node; at most {} are supported", *gpu, kMaxGpusPerNode));
    }
    node.gpu_count = static_cast<int>(*gpu);
    const std::string_view model = csv.fields()[c_model];
    if (node.gpu_count > 0) {
      if (model.empty()) return csv.error("model: empty but the node has GPUs");
      auto id = models.intern(model, fmt::format("{}:{}", source, csv.line_number()));
      if (!id)
        return csv.error(fmt::format("model: too many distinct GPU models ({})", kMaxGpuModels));
      node.model = *id;
    } else if (!model.empty()) {
      return csv.error(fmt::format("model: '{}' given but the node has no GPU", model));
    }
    nodes.push_back(std::move(node));
  }
  if (nodes.empty()) return Error{fmt::format("{}: no nodes (only a header)", source)};
  return nodes;
}

Result<std::vector<NodeSpec>> read_openb_nodes(const std::string& path, GpuModelRegistry& models) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  return parse_openb_nodes(text.value(), path, models);
}

Result<std::vector<PodSpec>> parse_openb_pods(std::string_view text, const std::string& source,
                                              const GpuModelRegistry& models) {
  CsvReader csv(text, source);
  if (Status s = csv.read_header(); !s.ok()) return s.error();
  auto cols = require_columns<5>(csv, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"});
  if (!cols.ok()) return Error{cols.error()};
  const auto [c_name, c_cpu, c_mem, c_ngpu, c_milli] = cols.value();
  const auto c_spec = csv.column("gpu_spec");
  const auto c_qos = csv.column("qos");
  const auto c_create = csv.column("creation_time");
  const auto c_delete = csv.column("deletion_time");
  const auto c_sched = csv.column("scheduled_time");

  std::vector<PodSpec> pods;
  NameLines names("pod name");
  while (csv.next()) {
    if (Status s = check_field_count(csv); !s.ok()) return s.error();
    std::optional<Error> err;
    PodSpec pod;
    pod.name = std::string(csv.fields()[c_name]);
    if (pod.name.empty()) return csv.error("name: empty pod name");
    if (Status s = names.add(csv, pod.name); !s.ok()) return s.error();
    auto cpu = field_int(csv, c_cpu, "cpu_milli", err);
    auto mem = field_int(csv, c_mem, "memory_mib", err);
    auto ngpu = field_int(csv, c_ngpu, "num_gpu", err);
    auto milli = field_int(csv, c_milli, "gpu_milli", err);
    if (err) return *err;
    pod.cpu_milli = *cpu;
    pod.memory_mib = *mem;
    if (*milli > kGpuMilli) {
      return csv.error(fmt::format("gpu_milli: {} exceeds {} (one whole GPU)", *milli, kGpuMilli));
    }
    if (*ngpu > 1 && *milli < kGpuMilli) {
      return csv.error(fmt::format(
          "num_gpu {} with gpu_milli {}: a multi-GPU pod must take whole GPUs (gpu_milli 1000)",
          *ngpu, *milli));
    }
    if (*ngpu == 0 && *milli > 0) {
      return csv.error(fmt::format("gpu_milli {} with num_gpu 0", *milli));
    }
    if (*ngpu > 0 && *milli == 0) {
      return csv.error(fmt::format("num_gpu {} with gpu_milli 0", *ngpu));
    }
    if (*ngpu > kMaxGpusPerNode) {
      return csv.error(fmt::format("num_gpu: {} exceeds the largest supported node ({} GPUs)",
                                   *ngpu, kMaxGpusPerNode));
    }
    pod.num_gpu = static_cast<int>(*ngpu);
    pod.gpu_milli = static_cast<int32_t>(*milli);

    if (c_spec && !csv.fields()[*c_spec].empty()) {
      std::string_view spec = csv.fields()[*c_spec];
      while (true) {
        const std::size_t bar = spec.find('|');
        const std::string_view name = spec.substr(0, bar);
        auto id = models.find(name);
        if (!id) {
          return csv.error(fmt::format("gpu_spec: unknown GPU model '{}' (known: {})", name,
                                       models.known_names()));
        }
        pod.gpu_spec |= GpuModelSet{1} << *id;
        if (bar == std::string_view::npos) break;
        spec.remove_prefix(bar + 1);
      }
    }
    if (c_qos) {
      const std::string_view q = csv.fields()[*c_qos];
      if (!q.empty() && !parse_qos(q, pod.qos)) {
        return csv.error(fmt::format("qos: unknown class '{}' (LS, BE, Burstable, Guaranteed)", q));
      }
    }
    // Timestamps: empty means absent (e.g. scheduled_time of a Pending pod).
    auto time_field = [&](std::optional<std::size_t> col, const char* name, int64_t& out) {
      if (!col || csv.fields()[*col].empty()) return;
      if (auto v = field_int(csv, *col, name, err)) out = *v;
    };
    time_field(c_create, "creation_time", pod.creation_time);
    time_field(c_delete, "deletion_time", pod.deletion_time);
    time_field(c_sched, "scheduled_time", pod.scheduled_time);
    if (err) return *err;
    if (pod.creation_time >= 0 && pod.deletion_time >= 0 && pod.deletion_time < pod.creation_time) {
      return csv.error(fmt::format("deletion_time {} is before creation_time {}", pod.deletion_time,
                                   pod.creation_time));
    }
    pods.push_back(std::move(pod));
  }
  if (pods.empty()) return Error{fmt::format("{}: no pods (only a header)", source)};
  return pods;
}

Result<std::vector<PodSpec>> read_openb_pods(const std::string& path,
                                             const GpuModelRegistry& models) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  return parse_openb_pods(text.value(), path, models);
}

}  // namespace greensched::trace
