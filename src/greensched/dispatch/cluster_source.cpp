#include "greensched/dispatch/cluster_source.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include "greensched/serve/gpu_index.hpp"
#include "greensched/serve/json_fields.hpp"
#include "greensched/serve/node_object.hpp"
#include "greensched/serve/pod_request.hpp"

namespace greensched::dispatch {

using nlohmann::json;

namespace {

std::string string_at(const json& object, std::string_view key) {
  const json* v = serve::find_field(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

// The first GPUs of `node` with room for `pod`: one with the share free, or whole free GPUs.
GpuMask first_fit_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod) {
  if (!pod.needs_gpu()) return 0;
  const NodeSpec& spec = cluster.spec(node);
  const NodeState& st = cluster.state(node);
  GpuMask mask = 0;
  int taken = 0;
  for (int g = 0; g < spec.gpu_count && taken < pod.num_gpu; ++g) {
    const bool room = pod.shares_gpu() ? st.gpu_free_milli[g] >= pod.gpu_milli
                                       : st.gpu_free_milli[g] == kGpuMilli;
    if (room) {
      mask |= GpuMask{1} << g;
      ++taken;
    }
  }
  return taken == pod.num_gpu ? mask : 0;
}

}  // namespace

Result<std::unique_ptr<serve::ClusterState>> state_from_lists(const json& nodes, const json& pods,
                                                              GpuModelRegistry& models,
                                                              const serve::StateOptions& options,
                                                              int* skipped) {
  auto infos = serve::parse_node_list(nodes);
  if (!infos.ok()) return Error{fmt::format("nodes: {}", infos.error())};
  std::vector<NodeSpec> specs;
  for (const serve::NodeInfo& info : infos.value()) {
    if (info.cordoned) continue;  // no room for new work; its pods are skipped with it
    auto spec = serve::to_node_spec(info, models);
    if (!spec.ok()) return Error{fmt::format("nodes: {}", spec.error())};
    specs.push_back(std::move(spec.value()));
  }
  auto state = serve::ClusterState::create(models, std::move(specs), options);
  if (!state.ok()) return Error{state.error()};
  int skip = 0;
  const json* items = serve::find_field(pods, "items");
  if (items != nullptr && !items->is_array()) return Error{"pods: items is not an array"};
  for (std::size_t i = 0; items != nullptr && i < items->size(); ++i) {
    const json& pod = (*items)[i];
    const json* spec = serve::find_field(pod, "spec");
    const json* status = serve::find_field(pod, "status");
    const std::string node = spec != nullptr ? string_at(*spec, "nodeName") : std::string();
    const std::string phase = status != nullptr ? string_at(*status, "phase") : std::string();
    if (node.empty() || phase == "Succeeded" || phase == "Failed") continue;
    auto request = serve::parse_pod(pod);
    if (!request.ok()) return Error{fmt::format("pods: items[{}]: {}", i, request.error())};
    auto index = state.value()->find_node(node);
    if (!index) {
      ++skip;
      continue;
    }
    const PodSpec as_policy_sees = state.value()->pod_spec(request.value());
    GpuMask gpus = 0;
    const json* metadata = serve::find_field(pod, "metadata");
    const json* annotations =
        metadata != nullptr ? serve::find_field(*metadata, "annotations") : nullptr;
    const std::string given =
        annotations != nullptr ? string_at(*annotations, serve::kGpuIndexAnnotation) : "";
    if (!given.empty()) {
      auto parsed = serve::parse_gpu_index(given);
      if (!parsed.ok()) {
        return Error{
            fmt::format("pods: items[{}]: {}: {}", i, serve::kGpuIndexAnnotation, parsed.error())};
      }
      gpus = parsed.value();
    } else {
      gpus = first_fit_gpus(state.value()->cluster(), *index, as_policy_sees);
    }
    if (!state.value()->bind(request.value(), node, gpus).ok()) ++skip;
  }
  if (skipped != nullptr) *skipped = skip;
  return std::move(state.value());
}

namespace {

class KubeSource final : public ClusterSource {
 public:
  explicit KubeSource(serve::KubeApiOptions api) : api_(std::move(api)) {}
  std::string describe() const override { return api_.server; }
  Result<std::unique_ptr<serve::ClusterState>> read(GpuModelRegistry& models,
                                                    const serve::StateOptions& options,
                                                    Deadline deadline) override {
    const auto budget = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now());
    auto nodes = get(deadline, "/api/v1/nodes", budget.count());
    if (!nodes.ok()) return Error{nodes.error()};
    auto pods =
        get(deadline,
            "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed",
            budget.count());
    if (!pods.ok()) return Error{pods.error()};
    return state_from_lists(nodes.value(), pods.value(), models, options);
  }

 private:
  // GET `path` as JSON with the time left until `deadline` as every timeout.
  Result<json> get(Deadline deadline, const std::string& path, double budget_s) {
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Error{fmt::format("GET {}{}: no answer within {:.3g} s", api_.server, path, budget_s)};
    }
    auto token = serve::read_api_token(api_.token_file);
    if (!token.ok()) return Error{token.error()};
    auto client = serve::kube_api_client(api_, 1);
    client->set_connection_timeout(left);
    client->set_read_timeout(left);
    client->set_write_timeout(left);
    const httplib::Headers headers{{"Authorization", "Bearer " + token.value()},
                                   {"Accept", "application/json"}};
    auto res = client->Get(path.c_str(), headers);
    if (!res) {
      const httplib::Error e = res.error();
      if (e == httplib::Error::Read || e == httplib::Error::ConnectionTimeout ||
          e == httplib::Error::Write || std::chrono::steady_clock::now() >= deadline) {
        return Error{fmt::format("GET {}{}: no answer within {:.3g} s ({})", api_.server, path,
                                 budget_s, httplib::to_string(e))};
      }
      return Error{fmt::format("GET {}{}: {}", api_.server, path, httplib::to_string(e))};
    }
    if (res->status != 200) {
      return Error{fmt::format("GET {}{}: HTTP {}: {}", api_.server, path, res->status,
                               res->body.substr(0, 300))};
    }
    json parsed = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      return Error{fmt::format("GET {}{}: the reply is not JSON", api_.server, path)};
    }
    return parsed;
  }

  serve::KubeApiOptions api_;
};

class StaticSource final : public ClusterSource {
 public:
  StaticSource(std::vector<NodeSpec> nodes, const GpuModelRegistry& node_models)
      : nodes_(std::move(nodes)), node_models_(node_models) {}
  std::string describe() const override { return "the fleet file's node list"; }
  Result<std::unique_ptr<serve::ClusterState>> read(GpuModelRegistry& models,
                                                    const serve::StateOptions& options,
                                                    Deadline /*deadline*/) override {
    std::vector<NodeSpec> specs = nodes_;
    for (NodeSpec& n : specs) {
      if (n.gpu_count <= 0) continue;
      const std::string& name = node_models_.name(n.model);
      auto id = models.find(name);
      if (!id && models.size() < serve::kUnknownModelBit) id = models.intern(name);
      if (!id) return Error{fmt::format("node {}: too many distinct GPU models", n.name)};
      n.model = *id;
    }
    auto state = serve::ClusterState::create(models, std::move(specs), options);
    if (!state.ok()) return Error{state.error()};
    return std::move(state.value());
  }

 private:
  std::vector<NodeSpec> nodes_;
  GpuModelRegistry node_models_;
};

}  // namespace

std::unique_ptr<ClusterSource> make_kube_source(serve::KubeApiOptions api) {
  return std::make_unique<KubeSource>(std::move(api));
}

std::unique_ptr<ClusterSource> make_static_source(std::vector<NodeSpec> nodes,
                                                  const GpuModelRegistry& node_models) {
  return std::make_unique<StaticSource>(std::move(nodes), node_models);
}

}  // namespace greensched::dispatch
