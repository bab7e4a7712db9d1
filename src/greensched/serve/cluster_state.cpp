#include "greensched/serve/cluster_state.hpp"

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/policy/registry.hpp"
#include "greensched/serve/gpu_index.hpp"
#include "greensched/serve/json_fields.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

// Shape ids the policies may memoise on; rarer shapes are scored without the memo.
constexpr uint32_t kShapeSlots = 256;
// FGD interns every node state it meets; past this many the model is rebuilt from scratch.
constexpr std::size_t kMaxFragStates = 200000;

Result<int64_t> int_field(const json& j, const char* key) {
  const json* v = find_field(j, key);
  if (v == nullptr || !v->is_number_integer()) {
    return Error{fmt::format("journal entry: {} missing or not an integer", key)};
  }
  return v->get<int64_t>();
}

Result<std::string> str_field(const json& j, const char* key, bool required) {
  const json* v = find_field(j, key);
  if (v == nullptr) {
    if (required) return Error{fmt::format("journal entry: {} missing", key)};
    return std::string();
  }
  if (!v->is_string()) return Error{fmt::format("journal entry: {} not a string", key)};
  return v->get<std::string>();
}

json node_json(const NodeSpec& spec, const GpuModelRegistry& models) {
  return json{{"op", "node"},
              {"name", spec.name},
              {"cpu_milli", spec.cpu_milli},
              {"memory_mib", spec.memory_mib},
              {"gpu_count", spec.gpu_count},
              {"gpu_model", spec.model == kNoGpuModel ? std::string() : models.name(spec.model)}};
}

json bind_json(const BoundPod& pod) {
  json entry{{"op", "bind"},
             {"ns", pod.request.ref.ns},
             {"name", pod.request.ref.name},
             {"uid", pod.request.ref.uid},
             {"node", pod.node},
             {"cpu_milli", pod.request.cpu_milli},
             {"memory_mib", pod.request.memory_mib},
             {"num_gpu", pod.request.num_gpu},
             {"gpu_milli", pod.request.gpu_milli},
             {"gpu_models", pod.request.gpu_models},
             {"gpu_index", format_gpu_index(pod.gpus)}};
  // Only when set: journals written before the key existed read the same.
  if (pod.request.movable) entry["movable"] = true;
  return entry;
}

}  // namespace

ClusterState::ClusterState(GpuModelRegistry models, std::vector<NodeSpec> nodes,
                           StateOptions options)
    : models_(std::move(models)),
      specs_(std::move(nodes)),
      options_(std::move(options)),
      rng_(options_.seed) {}

Result<std::unique_ptr<ClusterState>> ClusterState::create(GpuModelRegistry models,
                                                           std::vector<NodeSpec> nodes,
                                                           StateOptions options) {
  auto terms = policy::parse_policy_spec(options.policy);
  if (!terms.ok()) return Error{terms.error()};
  std::unique_ptr<ClusterState> state(
      new ClusterState(std::move(models), std::move(nodes), std::move(options)));
  state->pue_ = state->options_.power_model.pue();
  for (std::size_t n = 0; n < state->specs_.size(); ++n) {
    const NodeSpec& spec = state->specs_[n];
    if (spec.model == kUnknownModelBit) {
      return Error{fmt::format("node {}: too many distinct GPU models", spec.name)};
    }
    if (!state->node_index_.emplace(spec.name, static_cast<NodeIndex>(n)).second) {
      return Error{fmt::format("node {} listed twice", spec.name)};
    }
  }
  if (Status s = state->rebuild(); !s.ok()) return Error{s.message()};
  return state;
}

Status ClusterState::rebuild() {
  // A node whose GPU model has no power figures is refused, as `greensched simulate` refuses it
  // (power::check_gpu_models is this resolve's status).
  auto resolved = options_.power_model.resolve(specs_, models_, kPowerModelHint);
  if (!resolved.ok()) return Error{resolved.error()};
  std::vector<power::NodePower> figures = std::move(resolved.value());
  auto cluster = std::make_unique<Cluster>(specs_);
  for (const auto* held : {&pods_, &assumed_}) {
    for (const auto& [key, pod] : *held) {
      const NodeIndex node = node_index_.at(pod.node);
      if (Status s = cluster->allocate(pod.id, pod.spec, node, pod.gpus); !s.ok()) {
        return Error{fmt::format("rebuilding the cluster: {}", s.message())};
      }
    }
  }
  auto frag_model = std::make_shared<frag::FragmentationModel>(options_.target);
  auto node_power = std::make_shared<const std::vector<power::NodePower>>(std::move(figures));
  policy::PolicyContext context;
  context.frag = frag_model;
  context.shape_count = kShapeSlots;
  context.power = node_power;
  context.gpu_select = options_.gpu_select;
  auto policy = policy::make_policy(options_.policy, context);
  if (!policy.ok()) return Error{policy.error()};

  cluster_ = std::move(cluster);
  frag_model_ = std::move(frag_model);
  fragmentation_ = std::make_unique<frag::ClusterFragmentation>(*frag_model_, *cluster_);
  node_power_ = std::move(node_power);
  power_ = std::make_unique<power::ClusterPower>(*node_power_, *cluster_);
  policy_ = std::move(policy.value());
  return Status::Ok();
}

Result<std::unique_ptr<policy::Policy>> ClusterState::planning_policy() const {
  policy::PolicyContext context;
  context.frag = std::make_shared<frag::FragmentationModel>(options_.target);
  context.shape_count = kShapeSlots;
  context.power = node_power_;
  context.gpu_select = options_.gpu_select;
  return policy::make_policy(options_.policy, context);
}

std::optional<NodeIndex> ClusterState::find_node(std::string_view name) const {
  auto it = node_index_.find(std::string(name));
  if (it == node_index_.end()) return std::nullopt;
  return it->second;
}

Result<NodeSpec> ClusterState::node_spec(const NodeInfo& info) {
  return to_node_spec(info, models_);
}

Status ClusterState::add_node(NodeSpec spec) {
  std::vector<NodeSpec> one;
  one.push_back(std::move(spec));
  return add_nodes(std::move(one));
}

Status ClusterState::add_nodes(std::vector<NodeSpec> specs) {
  const std::size_t before = specs_.size();
  const auto undo = [&] {
    for (std::size_t i = before; i < specs_.size(); ++i) node_index_.erase(specs_[i].name);
    specs_.resize(before);
  };
  for (const NodeSpec& spec : specs) {
    if (!node_index_.emplace(spec.name, static_cast<NodeIndex>(specs_.size())).second) {
      undo();
      return Error{fmt::format("node {} already exists", spec.name)};
    }
    specs_.push_back(spec);
  }
  if (specs.empty()) return Status::Ok();
  if (Status s = rebuild(); !s.ok()) {
    undo();
    if (Status again = rebuild(); !again.ok()) return again;
    return s;
  }
  for (NodeSpec& spec : specs) added_.push_back(std::move(spec));
  return Status::Ok();
}

PodSpec ClusterState::pod_spec(const PodRequest& request) {
  PodSpec spec;
  spec.name = request.ref.key();
  spec.cpu_milli = request.cpu_milli;
  spec.memory_mib = request.memory_mib;
  spec.num_gpu = request.num_gpu;
  spec.gpu_milli = request.gpu_milli;
  for (const std::string& m : request.gpu_models) {
    auto id = models_.find(m);
    spec.gpu_spec |= GpuModelSet{1} << (id ? *id : kUnknownModelBit);
  }
  const PodShape key = spec.shape_fields();
  auto it = shapes_.find(key);
  if (it == shapes_.end() && shapes_.size() < kShapeSlots) {
    it = shapes_.emplace(key, static_cast<uint32_t>(shapes_.size())).first;
  }
  spec.shape = it != shapes_.end() ? it->second : kShapeSlots;
  return spec;
}

const BoundPod* ClusterState::find_pod(const std::string& key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

Result<BoundPod> ClusterState::place(const PodRequest& request, std::string_view node,
                                     GpuMask gpus) {
  const std::string key = request.ref.key();
  if (pods_.contains(key)) return Error{fmt::format("pod {} is already bound", key)};
  if (assumed_.contains(key)) return Error{fmt::format("pod {} is already assumed", key)};
  auto index = find_node(node);
  if (!index) return Error{fmt::format("unknown node {}", node)};
  BoundPod pod;
  pod.request = request;
  pod.spec = pod_spec(request);
  pod.node = std::string(node);
  pod.gpus = gpus;
  if (!free_ids_.empty()) {
    pod.id = free_ids_.back();
  } else {
    pod.id = next_id_;
  }
  if (Status s = cluster_->allocate(pod.id, pod.spec, *index, gpus); !s.ok()) return s.error();
  if (!free_ids_.empty()) {
    free_ids_.pop_back();
  } else {
    ++next_id_;
  }
  fragmentation_->update(*cluster_, *index);
  power_->update(*cluster_, *index);
  return pod;
}

void ClusterState::free_room(const BoundPod& pod) {
  const NodeIndex index = node_index_.at(pod.node);
  free_ids_.push_back(pod.id);
  fragmentation_->update(*cluster_, index);
  power_->update(*cluster_, index);
}

Status ClusterState::bind(const PodRequest& request, std::string_view node, GpuMask gpus) {
  auto pod = place(request, node, gpus);
  if (!pod.ok()) return pod.status();
  pods_.emplace(request.ref.key(), std::move(pod.value()));
  if (frag_model_->state_count() > kMaxFragStates) return rebuild();
  return Status::Ok();
}

Status ClusterState::release(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return Error{fmt::format("pod {} holds no allocation", key)};
  if (Status s = cluster_->release(it->second.id); !s.ok()) return s;
  const BoundPod pod = std::move(it->second);
  pods_.erase(it);
  free_room(pod);
  return Status::Ok();
}

Status ClusterState::assume(const PodRequest& request, std::string_view node, GpuMask gpus) {
  auto pod = place(request, node, gpus);
  if (!pod.ok()) return pod.status();
  assumed_.emplace(request.ref.key(), std::move(pod.value()));
  if (frag_model_->state_count() > kMaxFragStates) return rebuild();
  return Status::Ok();
}

const BoundPod* ClusterState::find_assumed(const std::string& key) const {
  auto it = assumed_.find(key);
  return it == assumed_.end() ? nullptr : &it->second;
}

Status ClusterState::forget_assumed(const std::string& key) {
  auto it = assumed_.find(key);
  if (it == assumed_.end()) return Error{fmt::format("pod {} is not assumed", key)};
  if (Status s = cluster_->release(it->second.id); !s.ok()) return s;
  const BoundPod pod = std::move(it->second);
  assumed_.erase(it);
  free_room(pod);
  return Status::Ok();
}

Status ClusterState::confirm_assumed(const std::string& key, const std::string& uid) {
  auto it = assumed_.find(key);
  if (it == assumed_.end()) return Error{fmt::format("pod {} is not assumed", key)};
  if (pods_.contains(key)) return Error{fmt::format("pod {} is already bound", key)};
  BoundPod pod = std::move(it->second);
  assumed_.erase(it);
  if (!uid.empty()) pod.request.ref.uid = uid;
  pods_.emplace(key, std::move(pod));
  return Status::Ok();
}

Status ClusterState::set_movable(const std::string& key, bool movable) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return Error{fmt::format("pod {} is not bound", key)};
  it->second.request.movable = movable;
  return Status::Ok();
}

std::string ClusterState::node_entry(const NodeSpec& spec, const GpuModelRegistry& models) {
  return node_json(spec, models).dump();
}

std::string ClusterState::bind_entry(const BoundPod& pod) {
  return bind_json(pod).dump();
}

std::string ClusterState::release_entry(const PodRef& ref) {
  return json{{"op", "release"}, {"ns", ref.ns}, {"name", ref.name}, {"uid", ref.uid}}.dump();
}

std::string ClusterState::snapshot_entry() const {
  json nodes = json::array();
  for (const NodeSpec& spec : added_) nodes.push_back(node_json(spec, models_));
  json pods = json::array();
  for (const auto& [key, pod] : pods_) pods.push_back(bind_json(pod));
  // The journal recognises a snapshot by this exact prefix.
  return fmt::format("{{\"op\":\"snapshot\",\"nodes\":{},\"pods\":{}}}", nodes.dump(), pods.dump());
}

Status ClusterState::apply_entry(const std::string& entry) {
  json j = parse_json_or_discarded(entry);
  if (j.is_discarded() || !j.is_object()) return Error{"journal entry: not a JSON object"};
  return apply_json(j);
}

Status ClusterState::apply_json(const json& j) {
  auto op = str_field(j, "op", true);
  if (!op.ok()) return Error{op.error()};
  if (op.value() == "snapshot") {
    const json* nodes = find_field(j, "nodes");
    const json* pods = find_field(j, "pods");
    if (nodes == nullptr || !nodes->is_array() || pods == nullptr || !pods->is_array()) {
      return Error{"journal snapshot: nodes or pods missing"};
    }
    std::string failures;
    for (const json& n : *nodes) {
      if (Status s = apply_json(n); !s.ok()) failures += s.message() + "; ";
    }
    for (const json& p : *pods) {
      if (Status s = apply_json(p); !s.ok()) failures += s.message() + "; ";
    }
    if (!failures.empty()) return Error{"journal snapshot: " + failures};
    return Status::Ok();
  }
  if (op.value() == "node") {
    NodeInfo info;
    auto name = str_field(j, "name", true);
    auto cpu = int_field(j, "cpu_milli");
    auto mem = int_field(j, "memory_mib");
    auto gpus = int_field(j, "gpu_count");
    auto model = str_field(j, "gpu_model", false);
    if (!name.ok() || !cpu.ok() || !mem.ok() || !gpus.ok() || !model.ok()) {
      return Error{"journal node entry: malformed"};
    }
    if (gpus.value() < 0 || gpus.value() > kMaxGpusPerNode) {
      return Error{"journal node entry: bad gpu_count"};
    }
    info.name = name.value();
    info.cpu_milli = cpu.value();
    info.memory_mib = mem.value();
    info.gpu_count = static_cast<int>(gpus.value());
    info.gpu_model = model.value();
    if (node_index_.contains(info.name)) return Status::Ok();  // now in the node list itself
    auto spec = node_spec(info);
    if (!spec.ok()) return Error{spec.error()};
    return add_node(std::move(spec.value()));
  }
  if (op.value() == "bind") {
    PodRequest r;
    auto ns = str_field(j, "ns", true);
    auto name = str_field(j, "name", true);
    auto uid = str_field(j, "uid", false);
    auto node = str_field(j, "node", true);
    auto cpu = int_field(j, "cpu_milli");
    auto mem = int_field(j, "memory_mib");
    auto num_gpu = int_field(j, "num_gpu");
    auto gpu_milli = int_field(j, "gpu_milli");
    auto index = str_field(j, "gpu_index", false);
    if (!ns.ok() || !name.ok() || !uid.ok() || !node.ok() || !cpu.ok() || !mem.ok() ||
        !num_gpu.ok() || !gpu_milli.ok() || !index.ok()) {
      return Error{"journal bind entry: malformed"};
    }
    r.ref = PodRef{ns.value(), name.value(), uid.value()};
    r.cpu_milli = cpu.value();
    r.memory_mib = mem.value();
    if (num_gpu.value() < 0 || num_gpu.value() > kMaxGpusPerNode || gpu_milli.value() < 0 ||
        gpu_milli.value() > kGpuMilli) {
      return Error{"journal bind entry: bad GPU request"};
    }
    r.num_gpu = static_cast<int>(num_gpu.value());
    r.gpu_milli = static_cast<int32_t>(gpu_milli.value());
    if (const json* models = find_field(j, "gpu_models"); models != nullptr && models->is_array()) {
      for (const json& m : *models) {
        if (m.is_string()) r.gpu_models.push_back(m.get<std::string>());
      }
    }
    if (const json* movable = find_field(j, "movable"); movable != nullptr) {
      if (!movable->is_boolean()) return Error{"journal bind entry: movable not a boolean"};
      r.movable = movable->get<bool>();
    }
    auto gpus = parse_gpu_index(index.value());
    if (!gpus.ok()) return Error{gpus.error()};
    if (Status s = bind(r, node.value(), gpus.value()); !s.ok()) {
      return Error{fmt::format("journal bind of {}: {}", r.ref.key(), s.message())};
    }
    return Status::Ok();
  }
  if (op.value() == "release") {
    auto ns = str_field(j, "ns", true);
    auto name = str_field(j, "name", true);
    if (!ns.ok() || !name.ok()) return Error{"journal release entry: malformed"};
    return release(ns.value() + "/" + name.value());
  }
  return Error{fmt::format("journal entry: unknown op '{}'", op.value())};
}

json ClusterState::pod_json(const BoundPod& pod) {
  const std::string index = format_gpu_index(pod.gpus);
  json annotations = json::object();
  if (pod.request.num_gpu > 0) annotations[std::string(kGpuIndexAnnotation)] = index;
  if (pod.request.movable) annotations[std::string(kMovableAnnotation)] = "true";
  return json{{"namespace", pod.request.ref.ns},      {"name", pod.request.ref.name},
              {"uid", pod.request.ref.uid},           {"node", pod.node},
              {"cpu_milli", pod.request.cpu_milli},   {"memory_mib", pod.request.memory_mib},
              {"gpu_count", pod.request.num_gpu},     {"gpu_milli", pod.request.gpu_milli},
              {"gpu_models", pod.request.gpu_models}, {"gpu_indices", index},
              {"annotations", std::move(annotations)}};
}

}  // namespace greensched::serve
