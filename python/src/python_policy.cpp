#include "python_policy.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include "convert.hpp"
#include "greensched/policy/registry.hpp"

namespace greensched::python {
namespace {

struct Registered {
  py::object fn;
  bool min_max = false;
  uint32_t columns = 0;  // the columns of `nodes` (bits of Column)
};

// Touched only with the GIL held. Never freed: Python objects must not be released after the
// interpreter has gone.
std::map<std::string, Registered>& registered() {
  static auto* table = new std::map<std::string, Registered>();
  return *table;
}
std::optional<py::error_already_set>& kept_error() {
  static auto* error = new std::optional<py::error_already_set>();
  return *error;
}
std::atomic<bool> g_failed{false};

// Keeps the Python error being handled (the first of a run wins).
void keep_error(py::error_already_set&& e) {
  if (!kept_error()) kept_error() = std::move(e);
  g_failed = true;
}
void keep_value_error(const std::string& message) {
  PyErr_SetString(PyExc_ValueError, message.c_str());
  keep_error(py::error_already_set());
}

py::dict target_table(const frag::TargetWorkload& target) {
  using S = frag::TargetShape;
  TableBuilder t;
  t.add("cpu_milli", target.shapes, &S::cpu_milli);
  t.add("num_gpu", target.shapes, &S::num_gpu);
  t.add("gpu_milli", target.shapes, &S::gpu_milli);
  t.add<uint64_t>("gpu_spec", target.shapes, &S::gpu_spec);  // a bit per model
  t.add("count", target.shapes, &S::count);
  return t.release();
}

// The columns of `nodes`, by bit: the policy's `reads` picks them (node always).
enum Column { kNode, kGpuCount, kModel, kCpuFree, kMemoryFree, kGpuFree, kPods, kVersion, kState };
constexpr int kColumns = 9;
constexpr const char* kColumnNames[kColumns] = {
    "node",           "gpu_count", "model",   "cpu_free_milli", "memory_free_mib",
    "gpu_free_milli", "pods",      "version", "state"};
constexpr uint32_t kAllColumns = (1u << kColumns) - 1;

// The columns named by `reads` (a sequence of column names), checked.
uint32_t columns_read(const std::string& name, py::handle reads) {
  if (py::isinstance<py::str>(reads)) {
    throw BindingError(fmt::format("policy '{}': reads must be a list of column names", name));
  }
  uint32_t columns = 1u << kNode;
  for (py::handle item : reads) {
    const auto column = py::cast<std::string>(item);
    const auto* it = std::find(std::begin(kColumnNames), std::end(kColumnNames), column);
    if (it == std::end(kColumnNames) || column == "node" || column == "version") {
      throw BindingError(fmt::format(
          "policy '{}': reads names '{}'; expected some of gpu_count, model, cpu_free_milli, "
          "memory_free_mib, gpu_free_milli, pods, state (a score that reads node or version "
          "cannot be shared by identical nodes: leave reads out)",
          name, column));
    }
    columns |= 1u << (it - std::begin(kColumnNames));
  }
  return columns;
}

class PythonPolicy final : public policy::Policy {
 public:
  PythonPolicy(std::string name, py::object fn, bool min_max, uint32_t columns,
               std::shared_ptr<frag::FragmentationModel> frag)
      : name_(std::move(name)),
        fn_(std::move(fn)),
        min_max_(min_max),
        columns_(columns),
        frag_(std::move(frag)) {
    has_select_ = py::hasattr(fn_, "select_gpu");
  }
  ~PythonPolicy() override {
    py::gil_scoped_acquire gil;
    fn_ = py::object();
    views_.release().dec_ref();  // leaves no object to drop without the GIL
    for (py::array& b : buffers_) b.release().dec_ref();
  }

  std::string_view name() const override { return name_; }

  // With `reads` the score reads only those columns: nodes equal in them (and in what the
  // filter reads) score alike, so the scheduler may pass one row per class of such nodes.
  bool scores_by_class() const override { return columns_ != kAllColumns; }
  uint32_t class_key_parts() const override {
    uint32_t parts = 0;
    if (columns_ >> kMemoryFree & 1) parts |= kKeyMemory;
    if (columns_ >> kGpuFree & 1) parts |= kKeyGpuOrder;
    if (columns_ >> kPods & 1) parts |= kKeyPods;
    return parts;
  }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<policy::Candidate> candidates,
             Rng&) override {
    gpu_choice_.clear();
    if (g_failed) {
      for (policy::Candidate& c : candidates) c.raw = 0;
      return;
    }
    py::gil_scoped_acquire gil;
    try {
      call(cluster, pod, candidates);
    } catch (py::error_already_set& e) {
      keep_error(std::move(e));
      for (policy::Candidate& c : candidates) c.raw = 0;
    } catch (const std::exception& e) {
      keep_value_error(fmt::format("policy '{}': {}", name_, e.what()));
      for (policy::Candidate& c : candidates) c.raw = 0;
    }
  }

  void normalize(std::span<policy::Candidate> candidates) const override {
    if (min_max_) {
      policy::normalize_min_max(candidates);
    } else {
      Policy::normalize(candidates);
    }
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    if (pod.shares_gpu()) {
      for (const auto& [n, gpu] : gpu_choice_) {
        if (n != node || gpu < 0) continue;
        const NodeState& s = cluster.state(node);
        if (gpu >= cluster.spec(node).gpu_count || s.gpu_free_milli[gpu] < pod.gpu_milli) {
          py::gil_scoped_acquire gil;
          keep_value_error(fmt::format(
              "policy '{}' chose GPU {} of node {} for pod {}, which does not fit there", name_,
              gpu, cluster.spec(node).name, pod.name));
          break;
        }
        return GpuMask{1} << gpu;
      }
    }
    if (pod.shares_gpu() && has_select_ && !g_failed) {
      py::gil_scoped_acquire gil;
      try {
        const NodeIndex one[] = {node};
        const auto gpu = fn_.attr("select_gpu")(pod_dict(pod), features(cluster, one)).cast<int>();
        const NodeState& s = cluster.state(node);
        if (gpu >= 0 &&
            (gpu >= cluster.spec(node).gpu_count || s.gpu_free_milli[gpu] < pod.gpu_milli)) {
          keep_value_error(fmt::format(
              "policy '{}' chose GPU {} of node {} for pod {}, which does not fit there", name_,
              gpu, cluster.spec(node).name, pod.name));
        } else if (gpu >= 0) {
          return GpuMask{1} << gpu;
        }
      } catch (py::error_already_set& e) {
        keep_error(std::move(e));
      } catch (const std::exception& e) {
        keep_value_error(fmt::format("policy '{}': select_gpu: {}", name_, e.what()));
      }
    }
    return Policy::select_gpus(cluster, node, pod, rng);
  }

 private:
  // The columns of `nodes` (a node index each), one numpy array per column: views of buffers
  // kept for the run and overwritten by the next call (the docs say so).
  py::dict features(const Cluster& cluster, std::span<const NodeIndex> nodes) {
    if (width_ == 0) {
      for (const NodeSpec& s : cluster.specs()) width_ = std::max(width_, s.gpu_count);
      width_ = std::max(width_, 1);
    }
    const auto n = static_cast<py::ssize_t>(nodes.size());
    if (n > capacity_) {
      capacity_ = std::max<py::ssize_t>(n, static_cast<py::ssize_t>(cluster.size()));
      for (int c = 0; c < kColumns; ++c) {
        if (!(columns_ >> c & 1)) continue;
        if (c == kGpuFree) {
          buffers_[c] = py::array_t<int32_t>({capacity_, static_cast<py::ssize_t>(width_)});
        } else if (c == kCpuFree || c == kMemoryFree || c == kVersion) {
          buffers_[c] = py::array_t<int64_t>(capacity_);
        } else {
          buffers_[c] = py::array_t<int32_t>(capacity_);
        }
      }
      views_n_ = -1;
    }
    auto i32 = [&](int c) { return static_cast<int32_t*>(buffers_[c].mutable_data()); };
    auto i64 = [&](int c) { return static_cast<int64_t*>(buffers_[c].mutable_data()); };
    for (py::ssize_t i = 0; i < n; ++i) {
      const NodeIndex k = nodes[static_cast<std::size_t>(i)];
      const NodeSpec& spec = cluster.spec(k);
      const NodeState& st = cluster.state(k);
      i32(kNode)[i] = k;
      if (columns_ >> kGpuCount & 1) i32(kGpuCount)[i] = spec.gpu_count;
      if (columns_ >> kModel & 1) i32(kModel)[i] = spec.model == kNoGpuModel ? -1 : spec.model;
      if (columns_ >> kPods & 1) i32(kPods)[i] = st.pods;
      if (columns_ >> kCpuFree & 1) i64(kCpuFree)[i] = st.cpu_free_milli;
      if (columns_ >> kMemoryFree & 1) i64(kMemoryFree)[i] = st.memory_free_mib;
      if (columns_ >> kVersion & 1) i64(kVersion)[i] = st.version;
      if (columns_ >> kState & 1)
        i32(kState)[i] = static_cast<int32_t>(frag_->node_state(cluster, k));
      if (columns_ >> kGpuFree & 1)
        std::copy_n(st.gpu_free_milli.begin(), width_, i32(kGpuFree) + i * width_);
    }
    if (views_n_ != n) {  // views of the first n rows, made again only when n changes
      views_ = py::dict();
      for (int c = 0; c < kColumns; ++c) {
        if (!(columns_ >> c & 1)) continue;
        views_[kColumnNames[c]] = buffers_[c][py::slice(0, n, 1)];
      }
      views_n_ = n;
    }
    return py::reinterpret_steal<py::dict>(PyDict_Copy(views_.ptr()));
  }

  static py::dict pod_dict(const PodSpec& pod) {
    py::dict p;
    p["name"] = pod.name;
    p["cpu_milli"] = pod.cpu_milli;
    p["memory_mib"] = pod.memory_mib;
    p["num_gpu"] = pod.num_gpu;
    p["gpu_milli"] = pod.gpu_milli;
    p["gpu_spec"] = pod.gpu_spec;
    p["shape"] = pod.shape;
    return p;
  }

  void call(const Cluster& cluster, const PodSpec& pod, std::span<policy::Candidate> candidates) {
    const auto n = static_cast<py::ssize_t>(candidates.size());
    scratch_.resize(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) scratch_[i] = candidates[i].node;
    py::dict nodes = features(cluster, scratch_);
    py::dict p = pod_dict(pod);
    py::object out = fn_(p, nodes);
    py::object scores_obj = out;
    py::object gpus_obj;
    if (py::isinstance<py::tuple>(out)) {
      auto t = out.cast<py::tuple>();
      if (t.size() != 2) {
        return keep_value_error(fmt::format(
            "policy '{}' returned a tuple of {} items; expected scores or (scores, gpus)", name_,
            t.size()));
      }
      scores_obj = t[0];
      gpus_obj = t[1];
    }
    using Int64Array = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
    auto scores = Int64Array::ensure(scores_obj);
    if (!scores) throw py::error_already_set();
    if (scores.ndim() != 1 || scores.shape(0) != n) {
      return keep_value_error(fmt::format(
          "policy '{}' returned {} scores for {} candidate nodes (pod {}); expected one per node",
          name_, scores.ndim() == 1 ? scores.shape(0) : scores.size(), n, pod.name));
    }
    const int64_t* sc = scores.data();
    for (py::ssize_t i = 0; i < n; ++i) candidates[static_cast<std::size_t>(i)].raw = sc[i];
    if (gpus_obj && !gpus_obj.is_none() && scores_by_class()) {
      return keep_value_error(fmt::format(
          "policy '{}' has reads and returned GPU choices; with reads, choose GPUs with "
          "select_gpu(pod, node)",
          name_));
    }
    if (gpus_obj && !gpus_obj.is_none() && pod.shares_gpu()) {
      auto gpus = Int64Array::ensure(gpus_obj);
      if (!gpus) throw py::error_already_set();
      if (gpus.ndim() != 1 || gpus.shape(0) != n) {
        return keep_value_error(
            fmt::format("policy '{}' returned {} GPU choices for {} candidate nodes (pod {})",
                        name_, gpus.size(), n, pod.name));
      }
      const int64_t* g = gpus.data();
      for (py::ssize_t i = 0; i < n; ++i) {
        gpu_choice_.emplace_back(candidates[static_cast<std::size_t>(i)].node,
                                 static_cast<int>(g[i]));
      }
    }
  }

  std::string name_;
  py::object fn_;
  bool min_max_;
  bool has_select_ = false;                         // the policy has select_gpu(pod, node)
  uint32_t columns_;                                // bit per Column passed in `nodes`
  std::shared_ptr<frag::FragmentationModel> frag_;  // interns the node states (column state)
  int width_ = 0;
  // Per column, a buffer of `capacity_` rows; `views_` holds views of their first views_n_.
  std::array<py::array, kColumns> buffers_;
  py::ssize_t capacity_ = 0;
  py::dict views_;
  py::ssize_t views_n_ = -1;
  std::vector<NodeIndex> scratch_;
  std::vector<std::pair<NodeIndex, int>> gpu_choice_;  // of the last cycle
};

Result<std::unique_ptr<policy::Policy>> make_python_policy(const std::string& name,
                                                           const policy::PolicyContext& context) {
  py::gil_scoped_acquire gil;
  auto it = registered().find(name);
  if (it == registered().end()) return Error{fmt::format("no Python policy named '{}'", name)};
  auto frag = context.frag;
  if (!frag) frag = std::make_shared<frag::FragmentationModel>(frag::TargetWorkload{});
  auto p = std::make_unique<PythonPolicy>(name, it->second.fn, it->second.min_max,
                                          it->second.columns, std::move(frag));
  if (py::hasattr(it->second.fn, "reset")) {
    py::dict ctx;
    ctx["shape_count"] = context.shape_count;
    if (context.frag) {
      ctx["target"] = target_table(context.frag->target());
      ctx["covered_pods"] = context.frag->covered_pods();
    }
    try {
      it->second.fn.attr("reset")(ctx);
    } catch (py::error_already_set& e) {
      keep_error(std::move(e));
    }
  }
  return std::unique_ptr<policy::Policy>(std::move(p));
}

}  // namespace

void register_python_policy(const std::string& name, py::object fn, const std::string& normalize) {
  if (normalize != "none" && normalize != "min-max") {
    throw BindingError(fmt::format("normalize must be 'none' or 'min-max', got '{}' (policy '{}')",
                                   normalize, name));
  }
  if (!PyCallable_Check(fn.ptr())) {
    throw BindingError(fmt::format("policy '{}' is not callable", name));
  }
  const uint32_t columns =
      py::hasattr(fn, "reads") ? columns_read(name, fn.attr("reads")) : kAllColumns;
  check(policy::register_policy_factory(
      name, "a policy written in Python",
      [name](std::string_view arg,
             const policy::PolicyContext& context) -> Result<std::unique_ptr<policy::Policy>> {
        if (!arg.empty()) {
          return Error{fmt::format("the Python policy '{}' takes no argument", name)};
        }
        return make_python_policy(name, context);
      }));
  registered()[name] = Registered{std::move(fn), normalize == "min-max", columns};
}

bool uses_python_policy(const std::string& spec) {
  for (const auto& [name, r] : registered()) {
    std::size_t at = 0;
    while ((at = spec.find(name, at)) != std::string::npos) {
      const bool starts = at == 0 || spec[at - 1] == '+';
      const std::size_t end = at + name.size();
      const bool ends = end == spec.size() || spec[end] == ':' || spec[end] == '+';
      if (starts && ends) return true;
      at = end;
    }
  }
  return false;
}

void clear_policy_error() {
  kept_error().reset();
  g_failed = false;
}

void rethrow_policy_error() {
  if (!kept_error()) return;
  py::error_already_set e = std::move(*kept_error());
  clear_policy_error();
  throw e;
}

}  // namespace greensched::python
