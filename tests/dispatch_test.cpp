// The dispatch service (greensched dispatch): Kueue Workloads read with their annotations,
// worker cluster state from API lists, carbon forecasts in the Carbon Aware SDK's and
// Electricity Maps' formats, and decisions on a hand-made fleet: the cleaner cluster while it
// has room, dispatched work counted until it shows, the same answer when asked again and
// after a restart, a capacity-only choice when a signal is missing, and the HTTP front.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "greensched/core/prometheus_histogram.hpp"
#include "greensched/dispatch/cluster_source.hpp"
#include "greensched/dispatch/decision_journal.hpp"
#include "greensched/dispatch/dispatch_server.hpp"
#include "greensched/dispatch/dispatch_service.hpp"
#include "greensched/dispatch/signal_source.hpp"
#include "greensched/dispatch/workload_request.hpp"
#include "greensched/explain/explanation.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/multi/fleet_sim.hpp"
#include "greensched/trace/workload.hpp"
#include "prometheus_text.hpp"
#include "scratch_dir.hpp"
#include "test_pod.hpp"
#include "tls_test_support.hpp"

namespace greensched::dispatch {
namespace {

using nlohmann::json;

json workload(const std::string& name, int count, int gpus, const std::string& qos = "BE",
              const std::string& slack = "4h") {
  json container = {
      {"name", "main"},
      {"resources",
       {{"requests",
         {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  return {
      {"apiVersion", "kueue.x-k8s.io/v1beta1"},
      {"kind", "Workload"},
      {"metadata",
       {{"name", name},
        {"namespace", "team-a"},
        {"uid", "uid-" + name},
        {"creationTimestamp", "2023-01-02T00:00:00Z"},
        {"annotations",
         {{"greensched.io/qos", qos},
          {"greensched.io/slack", slack},
          {"greensched.io/duration", "2h"},
          {"greensched.io/data-gb", "20"}}}}},
      {"spec",
       {{"podSets",
         json::array({{{"name", "workers"},
                       {"count", count},
                       {"template", {{"spec", {{"containers", json::array({container})}}}}}}})}}}};
}

TEST(DispatchWorkload, ReadsPodSetsAndAnnotations) {
  auto w = parse_workload(workload("train", 3, 2, "BE", "1h30m"));
  ASSERT_TRUE(w.ok()) << w.error();
  EXPECT_EQ(w.value().key, "team-a/train");
  EXPECT_EQ(w.value().total_pods(), 3);
  EXPECT_EQ(w.value().largest().pod.num_gpu, 2);
  EXPECT_EQ(w.value().largest().pod.cpu_milli, 4000);
  EXPECT_FALSE(w.value().latency_sensitive);
  EXPECT_EQ(w.value().slack_s, 5400);
  EXPECT_EQ(w.value().duration_s, 7200);
  EXPECT_DOUBLE_EQ(w.value().data_gb, 20.0);
  EXPECT_EQ(w.value().created_epoch_s, 1672617600);
  EXPECT_TRUE(parse_workload(workload("serve", 1, 1, "LS")).value().latency_sensitive);
}

// Kueue copies a Job's pod template into its Workload but not the Job's annotations: the
// service reads them from the pod template too, the Workload's own first.
TEST(DispatchWorkload, AnnotationsOnThePodTemplate) {
  json w = workload("train", 1, 1);
  json annotations = w["metadata"]["annotations"];
  w["metadata"].erase("annotations");
  annotations["greensched.io/qos"] = "LS";
  w["spec"]["podSets"][0]["template"]["metadata"]["annotations"] = annotations;
  auto read = parse_workload(w);
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_TRUE(read.value().latency_sensitive);
  EXPECT_EQ(read.value().duration_s, 7200);
  EXPECT_DOUBLE_EQ(read.value().data_gb, 20.0);
  w["metadata"]["annotations"] = {{"greensched.io/qos", "BE"}};
  EXPECT_FALSE(parse_workload(w).value().latency_sensitive);
  EXPECT_EQ(parse_workload(w).value().duration_s, 7200);
  w["spec"]["podSets"][0]["template"]["metadata"]["annotations"]["greensched.io/slack"] = "soon";
  EXPECT_NE(parse_workload(w).error().find("greensched.io/slack: 'soon'"), std::string::npos)
      << parse_workload(w).error();
  w["spec"]["podSets"][0]["template"]["metadata"]["annotations"] = {{"greensched.io/slack", 4}};
  EXPECT_NE(parse_workload(w).error().find("spec.podSets[0].template.metadata.annotations"),
            std::string::npos)
      << parse_workload(w).error();
}

TEST(DispatchWorkload, BadFieldsAreNamed) {
  json bad = workload("x", 1, 1, "urgent");
  EXPECT_NE(parse_workload(bad).error().find("greensched.io/qos"), std::string::npos);
  bad = workload("x", 1, 1, "BE", "soon");
  EXPECT_NE(parse_workload(bad).error().find("greensched.io/slack"), std::string::npos);
  bad = workload("x", 1, 1);
  bad["spec"]["podSets"] = json::array();
  EXPECT_NE(parse_workload(bad).error().find("podSets"), std::string::npos);
  bad = workload("x", 1, 1);
  bad["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] =
      "lots";
  EXPECT_NE(parse_workload(bad).error().find("podSets[0].template"), std::string::npos);
  EXPECT_FALSE(parse_workload(json::array()).ok());
}

TEST(DispatchWorkload, Durations) {
  EXPECT_EQ(parse_duration_s("4h").value(), 14400);
  EXPECT_EQ(parse_duration_s("1h30m").value(), 5400);
  EXPECT_EQ(parse_duration_s("2d").value(), 172800);
  EXPECT_EQ(parse_duration_s("900").value(), 900);
  EXPECT_FALSE(parse_duration_s("").ok());
  EXPECT_FALSE(parse_duration_s("4x").ok());
  EXPECT_FALSE(parse_duration_s("h").ok());
  EXPECT_FALSE(parse_duration_s("1h30").ok());
}

json node(const std::string& name, int gpus) {
  return {{"metadata", {{"name", name}, {"labels", {{"alibabacloud.com/gpu-card-model", "T4"}}}}},
          {"status",
           {{"allocatable",
             {{"cpu", "32"}, {"memory", "128Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

json pod(const std::string& name, const std::string& node_name, int gpus, const std::string& phase,
         const std::string& gpu_index = "") {
  json p = {
      {"metadata", {{"name", name}, {"namespace", "default"}}},
      {"spec",
       {{"nodeName", node_name},
        {"containers",
         json::array(
             {{{"name", "c"},
               {"resources",
                {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}},
      {"status", {{"phase", phase}}}};
  if (!gpu_index.empty())
    p["metadata"]["annotations"] = {{"alibabacloud.com/gpu-index", gpu_index}};
  return p;
}

// A pod keeps the GPUs its gpu-index names; one without takes the first free ones; finished
// and unbound pods hold nothing; a pod on an unknown node is skipped and counted.
TEST(DispatchClusterState, FromNodeAndPodLists) {
  const json nodes = {{"kind", "NodeList"}, {"items", json::array({node("n0", 4), node("n1", 2)})}};
  const json pods = {
      {"kind", "PodList"},
      {"items", json::array({pod("a", "n0", 2, "Running", "2-3"), pod("b", "n0", 1, "Running"),
                             pod("c", "n1", 2, "Succeeded"), pod("d", "", 1, "Pending"),
                             pod("e", "gone", 1, "Running")})}};
  GpuModelRegistry models;
  int skipped = 0;
  auto state = state_from_lists(nodes, pods, models, serve::StateOptions{}, &skipped);
  ASSERT_TRUE(state.ok()) << state.error();
  const Cluster& c = state.value()->cluster();
  EXPECT_EQ(c.total_gpu_milli(), 6000);
  EXPECT_EQ(c.allocated_gpu_milli(), 3000);
  EXPECT_EQ(skipped, 1);
  const NodeState& n0 = c.state(*state.value()->find_node("n0"));
  EXPECT_EQ(n0.gpu_free_milli[0], 0);     // b, first free
  EXPECT_EQ(n0.gpu_free_milli[1], 1000);  // free
  EXPECT_EQ(n0.gpu_free_milli[2], 0);     // a
  EXPECT_EQ(n0.gpu_free_milli[3], 0);     // a
}

// A cordoned node (kubectl cordon, a drain) takes no new work: it is left out of the state,
// with the pods on it. With every node cordoned the cluster has no room at all.
TEST(DispatchClusterState, CordonedNodesAreLeftOut) {
  json cordoned = node("n1", 2);
  cordoned["spec"] = {{"unschedulable", true}};
  json open = node("n0", 4);
  open["spec"] = {{"unschedulable", false}};
  const json pods = {
      {"kind", "PodList"},
      {"items", json::array({pod("a", "n0", 2, "Running"), pod("b", "n1", 1, "Running")})}};
  GpuModelRegistry models;
  int skipped = 0;
  auto state = state_from_lists({{"items", json::array({open, cordoned})}}, pods, models,
                                serve::StateOptions{}, &skipped);
  ASSERT_TRUE(state.ok()) << state.error();
  EXPECT_EQ(state.value()->cluster().total_gpu_milli(), 4000);
  EXPECT_EQ(state.value()->cluster().allocated_gpu_milli(), 2000);
  EXPECT_FALSE(state.value()->find_node("n1"));
  EXPECT_EQ(skipped, 1);

  open["spec"]["unschedulable"] = true;
  auto none = state_from_lists({{"items", json::array({open, cordoned})}}, pods, models,
                               serve::StateOptions{}, &skipped);
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_EQ(none.value()->cluster().total_gpu_milli(), 0);
  EXPECT_EQ(skipped, 2);

  open["spec"]["unschedulable"] = "yes";
  auto bad = state_from_lists({{"items", json::array({open})}}, pods, models, serve::StateOptions{},
                              &skipped);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "nodes: NodeList.items[0]: Node n0: spec.unschedulable must be a boolean");
}

TEST(DispatchSignals, CarbonAwareSdkAndElectricityMapsForecasts) {
  const json sdk = json::parse(R"([{"location":"westeurope","windowSize":0,
    "forecastData":[{"location":"westeurope","timestamp":"2023-01-02T00:00:00+00:00","duration":60,"value":210.5},
                    {"location":"westeurope","timestamp":"2023-01-02T01:00:00+00:00","duration":60,"value":190},
                    {"location":"westeurope","timestamp":"2023-01-02T03:00:00+00:00","duration":60,"value":150}]}])");
  auto s = parse_carbon_aware_forecast(sdk);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s.value().step_s(), 3600);
  EXPECT_EQ(s.value().start_s(), 1672617600);
  ASSERT_EQ(s.value().values().size(), 4u);
  EXPECT_DOUBLE_EQ(s.value().values()[2], 190);  // the gap holds the value before
  EXPECT_DOUBLE_EQ(s.value().values()[3], 150);
  const json em = json::parse(R"({"zone":"DE","forecast":[
    {"carbonIntensity":302,"datetime":"2023-01-02T00:00:00.000Z"},
    {"carbonIntensity":280,"datetime":"2023-01-02T01:00:00.000Z"}],"updatedAt":"2023-01-01T23:00:00.000Z"})");
  auto e = parse_electricity_maps_forecast(em);
  ASSERT_TRUE(e.ok()) << e.error();
  EXPECT_EQ(e.value().start_s(), 1672617600);
  EXPECT_DOUBLE_EQ(e.value().values()[1], 280);
  EXPECT_FALSE(
      parse_carbon_aware_forecast(json::parse(R"([{"forecastData":[{"value":1}]}])")).ok());
  EXPECT_FALSE(parse_electricity_maps_forecast(json::parse(R"({"forecast":"no"})")).ok());
}

TEST(DispatchSignals, ClockMapsWallToSignalTime) {
  const SignalClock clock(1672617600, 3600, 1000);
  EXPECT_EQ(clock.signal_s(1000), 1672617600);
  EXPECT_EQ(clock.signal_s(1002), 1672617600 + 7200);
  EXPECT_EQ(clock.wall_s(1672617600 + 7200), 1002);
  EXPECT_EQ(SignalClock().signal_s(1234), 1234);
}

// Two sites of one 8-GPU T4 node each, constant carbon: "clean" 100 and "dirty" 300 g/kWh.
DispatchConfig two_clusters(const std::string& journal = "") {
  DispatchConfig c;
  const GpuModelId t4 = *c.fleet.models.intern("T4");
  for (const auto& [name, ci] : {std::pair{"clean", 100.0}, std::pair{"dirty", 300.0}}) {
    multi::SiteSpec s;
    s.name = name;
    s.nodes = {NodeSpec{std::string(name) + "/n0", 64000, 262144, 8, t4}};
    s.carbon = multi::TimeSeries(1672531200, 3600, {ci});
    s.pue = 1.2;
    c.fleet.sites.push_back(std::move(s));
  }
  c.journal_path = journal;
  c.clock = SignalClock(1672617600, 1, 0);
  return c;
}

json request(const json& w) {
  return {{"workload", w}};
}

TEST(DispatchService, CleanerClusterWhileItHasRoomAndDispatchedWorkCounts) {
  auto service = DispatchService::create(two_clusters(), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  // Each asks 2 pods x 2 GPUs (4 of clean's 8) for 2 h: the first two fill "clean" now.
  for (int i = 0; i < 2; ++i) {
    const DispatchReply r =
        service.value()->dispatch(request(workload("job" + std::to_string(i), 2, 2)).dump(), 10);
    ASSERT_EQ(r.status, 200) << r.body.dump();
    EXPECT_EQ(r.body["clusters"][0], "clean");
    EXPECT_EQ(r.body["start_after_s"], 0);
    EXPECT_EQ(r.body["mode"], "carbon");
    EXPECT_FALSE(r.body["reason"].get<std::string>().empty());
    EXPECT_EQ(r.body["ranking"][0]["cluster"], "clean");
    EXPECT_EQ(r.body["ranking"][1]["cluster"], "dirty");
  }
  // A third with 4 h of slack waits for them at "clean" (they end after 2 h); one with no
  // slack goes to "dirty" now.
  const DispatchReply waits = service.value()->dispatch(request(workload("job2", 2, 2)).dump(), 10);
  EXPECT_EQ(waits.body["clusters"][0], "clean");
  EXPECT_GE(waits.body["start_after_s"].get<int64_t>(), 7200 - 10);
  EXPECT_LE(waits.body["start_after_s"].get<int64_t>(), 4 * 3600);
  const DispatchReply now =
      service.value()->dispatch(request(workload("job3", 2, 2, "BE", "0")).dump(), 10);
  EXPECT_EQ(now.body["clusters"][0], "dirty");
  EXPECT_EQ(now.body["start_after_s"], 0);
  const json clusters = service.value()->clusters(10);
  EXPECT_EQ(clusters["clusters"][0]["committed"].size(), 3u);
  EXPECT_EQ(clusters["clusters"][1]["committed"].size(), 1u);
  // Asked again an hour later, the deferred one keeps its start, now an hour nearer (the
  // green-window check waits on start_after_s).
  const DispatchReply waits_later =
      service.value()->dispatch(request(workload("job2", 2, 2)).dump(), 10 + 3600);
  EXPECT_TRUE(waits_later.body["repeated"].get<bool>());
  EXPECT_EQ(waits_later.body["earliest_start"], waits.body["earliest_start"]);
  EXPECT_EQ(waits_later.body["start_after_s"].get<int64_t>(),
            waits.body["start_after_s"].get<int64_t>() - 3600);
  // Once commitments lapse (their pods never showed), "clean" takes work now again.
  const DispatchReply later =
      service.value()->dispatch(request(workload("job4", 2, 2, "BE", "0")).dump(), 100000);
  EXPECT_EQ(later.body["clusters"][0], "clean");
}

TEST(DispatchService, SameAnswerWhenAskedAgainAndAfterARestart) {
  testing::ScratchDir dir;
  const std::string journal = dir.path() + "/dispatch.jsonl";
  json first;
  {
    auto service = DispatchService::create(two_clusters(journal), 0);
    ASSERT_TRUE(service.ok()) << service.error();
    const DispatchReply r = service.value()->dispatch(request(workload("keep", 2, 2)).dump(), 10);
    ASSERT_EQ(r.status, 200) << r.body.dump();
    first = r.body;
    const DispatchReply again =
        service.value()->dispatch(request(workload("keep", 2, 2)).dump(), 20);
    EXPECT_EQ(again.body["clusters"], first["clusters"]);
    EXPECT_TRUE(again.body["repeated"].get<bool>());
  }
  // Every journal line is a dispatch record `greensched explain` reads.
  std::ifstream in(journal);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    auto record = explain::parse_decision_record(line, "journal");
    ASSERT_TRUE(record.ok()) << record.error();
    EXPECT_NE(explain::explain_text(record.value()).find("team-a/keep"), std::string::npos);
  }
  EXPECT_EQ(lines, 1);
  auto restarted = DispatchService::create(two_clusters(journal), 30);
  ASSERT_TRUE(restarted.ok()) << restarted.error();
  const DispatchReply after =
      restarted.value()->dispatch(request(workload("keep", 2, 2)).dump(), 30);
  EXPECT_EQ(after.body["clusters"], first["clusters"]);
  EXPECT_TRUE(after.body["repeated"].get<bool>());
  // Its commitment came back too: with no slack, one more fills "clean", the next goes dirty.
  const DispatchReply next =
      restarted.value()->dispatch(request(workload("next", 2, 2, "BE", "0")).dump(), 30);
  const DispatchReply third =
      restarted.value()->dispatch(request(workload("third", 2, 2, "BE", "0")).dump(), 30);
  EXPECT_EQ(next.body["clusters"][0], "clean");
  EXPECT_EQ(third.body["clusters"][0], "dirty");
}

TEST(DispatchService, NoAnswerWithoutTheJournal) {
  testing::ScratchDir dir;
  EXPECT_FALSE(DispatchService::create(two_clusters(dir.path() + "/no/such/dir/j.jsonl"), 0).ok());
  const std::string journal = dir.path() + "/j.jsonl";
  auto service = DispatchService::create(two_clusters(journal), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  std::filesystem::remove(journal);
  std::filesystem::create_directory(journal);  // the journal's path is now a folder
  const DispatchReply r = service.value()->dispatch(request(workload("w", 1, 1)).dump(), 10);
  EXPECT_EQ(r.status, 503) << r.body.dump();
  EXPECT_NE(r.body["error"].get<std::string>().find("journal"), std::string::npos);
}

TEST(DispatchService, MissingSignalDegradesToCapacityAndSaysSo) {
  DispatchConfig c = two_clusters();
  c.forecasts.resize(2);
  c.forecasts[0] = ForecastSource{"http://127.0.0.1:1/emissions/forecasts/current",
                                  ForecastFormat::kCarbonAwareSdk};
  auto service = DispatchService::create(std::move(c), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  const DispatchReply r = service.value()->dispatch(request(workload("w", 1, 1)).dump(), 10);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["mode"], "capacity-only");
  EXPECT_EQ(r.body["agent"], "least-loaded");
  ASSERT_EQ(r.body["degraded"].size(), 1u);
  EXPECT_NE(r.body["degraded"][0].get<std::string>().find("no carbon signal for clean"),
            std::string::npos);
}

TEST(DispatchService, BadRequestsAre400WithTheReason) {
  auto service = DispatchService::create(two_clusters(), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  const auto status = [&](const std::string& body) {
    const DispatchReply r = service.value()->dispatch(body, 10);
    EXPECT_TRUE(r.body.contains("error")) << body;
    return r.status;
  };
  EXPECT_EQ(status("{not json"), 400);
  EXPECT_EQ(status(R"({"nothing": 1})"), 400);
  json unknown = request(workload("w", 1, 1));
  unknown["clusters"] = {"mars"};
  EXPECT_EQ(status(unknown.dump()), 400);
  EXPECT_EQ(status(request(workload("w", 1, 1, "maybe")).dump()), 400);
  // Only the clusters it may go to count.
  json only_dirty = request(workload("w", 1, 1));
  only_dirty["clusters"] = {"dirty"};
  EXPECT_EQ(service.value()->dispatch(only_dirty.dump(), 10).body["clusters"][0], "dirty");
}

// A standing decision whose cluster the dispatcher now leaves out (its worker is unreachable)
// is made again among the others, and that one stands; a home it may not go to is still home.
TEST(DispatchService, DecidesAgainWhenItsClusterIsLeftOut) {
  testing::ScratchDir dir;
  auto service = DispatchService::create(two_clusters(dir.path() + "/j.jsonl"), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  json req = request(workload("moved", 1, 1, "BE", "0"));
  const DispatchReply first = service.value()->dispatch(req.dump(), 10);
  ASSERT_EQ(first.body["clusters"][0], "clean");
  req["clusters"] = {"dirty"};
  req["workload"]["metadata"]["annotations"]["greensched.io/home"] = "clean";
  const DispatchReply second = service.value()->dispatch(req.dump(), 12);
  ASSERT_EQ(second.status, 200) << second.body.dump();
  EXPECT_EQ(second.body["clusters"][0], "dirty");
  EXPECT_FALSE(second.body["repeated"].get<bool>());
  const DispatchReply third = service.value()->dispatch(req.dump(), 14);
  EXPECT_EQ(third.body["clusters"][0], "dirty");
  EXPECT_TRUE(third.body["repeated"].get<bool>());
  std::ifstream in(dir.path() + "/j.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 2);
}

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

// Opened and closed by a test; a GatedSource's reads wait while it is closed. Shared with
// the source, so a reader left blocked past the service's end still finds it.
struct ReadGate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = true;
  int reads = 0;
  void set(bool o) {
    std::lock_guard lock(mu);
    open = o;
    cv.notify_all();
  }
};

// The fleet file's nodes of a site, read only while the gate is open (else blocked, as an
// API server that accepts and never answers).
class GatedSource final : public ClusterSource {
 public:
  GatedSource(std::shared_ptr<ReadGate> gate, std::unique_ptr<ClusterSource> inner)
      : gate_(std::move(gate)), inner_(std::move(inner)) {}
  std::string describe() const override { return "gated " + inner_->describe(); }
  Result<std::unique_ptr<serve::ClusterState>> read(GpuModelRegistry& models,
                                                    const serve::StateOptions& options,
                                                    Deadline deadline) override {
    {
      std::unique_lock lock(gate_->mu);
      ++gate_->reads;
      gate_->cv.wait(lock, [&] { return gate_->open; });
    }
    return inner_->read(models, options, deadline);
  }

 private:
  std::shared_ptr<ReadGate> gate_;
  std::unique_ptr<ClusterSource> inner_;
};

// two_clusters() with "clean" read through a gate, short deadlines and refresh period.
DispatchConfig gated_clean(const std::shared_ptr<ReadGate>& gate) {
  DispatchConfig c = two_clusters();
  c.cluster_timeout_seconds = 0.3;
  c.refresh_seconds = 0.2;
  c.sources.resize(2);
  c.sources[0] = std::make_unique<GatedSource>(
      gate, make_static_source(c.fleet.sites[0].nodes, c.fleet.models));
  return c;
}

// Polls GET /v1/clusters until `pred` holds for cluster `i` (at most 5 s).
bool wait_for_cluster(DispatchService& service, std::size_t i,
                      const std::function<bool(const json&)>& pred) {
  const auto t0 = SteadyClock::now();
  while (seconds_since(t0) < 5) {
    if (pred(service.clusters(10)["clusters"][i])) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A cluster whose API hangs from the start is no option; decisions answer at once without it
// and say why; once it answers it is read and chosen again. The service stops without
// waiting for the hung read.
TEST(DispatchReaders, HungClusterNeverReadIsNoOptionUntilItAnswers) {
  auto gate = std::make_shared<ReadGate>();
  gate->set(false);
  auto t0 = SteadyClock::now();
  auto service = DispatchService::create(gated_clean(gate), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  EXPECT_LT(seconds_since(t0), 1.5);  // the first read waits for its deadline, no longer
  t0 = SteadyClock::now();
  const DispatchReply r =
      service.value()->dispatch(request(workload("w1", 1, 1, "BE", "0")).dump(), 10);
  EXPECT_LT(seconds_since(t0), 1.5);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["clusters"][0], "dirty");
  ASSERT_EQ(r.body["degraded"].size(), 1u) << r.body.dump();
  EXPECT_NE(r.body["degraded"][0].get<std::string>().find("cluster clean left out: no answer "
                                                          "within 0.3 s"),
            std::string::npos)
      << r.body.dump();
  ASSERT_EQ(r.body["degraded_clusters"].size(), 1u);
  EXPECT_EQ(r.body["degraded_clusters"][0]["name"], "clean");
  EXPECT_FALSE(r.body["degraded_clusters"][0]["up"].get<bool>());
  const json clean = service.value()->clusters(10)["clusters"][0];
  EXPECT_FALSE(clean["up"].get<bool>());
  EXPECT_FALSE(clean.contains("age_s"));

  gate->set(true);
  ASSERT_TRUE(wait_for_cluster(*service.value(), 0, [](const json& c) {
    return c["up"].get<bool>() && !c["degraded"].get<bool>();
  }));
  const DispatchReply again =
      service.value()->dispatch(request(workload("w2", 1, 1, "BE", "0")).dump(), 10);
  EXPECT_EQ(again.body["clusters"][0], "clean") << again.body.dump();
  EXPECT_TRUE(again.body["degraded"].empty()) << again.body.dump();

  // Hung again at the end: the service stops within its deadline, the read left to finish.
  gate->set(false);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  t0 = SteadyClock::now();
  service.value().reset();
  EXPECT_LT(seconds_since(t0), 1.5);
  gate->set(true);
}

// A cluster read once that then hangs is degraded: reported with its last known state and
// that state's age, left out while the other cluster is healthy, decided on by its last known
// state when it is the only one allowed; once it answers again it is chosen again.
TEST(DispatchReaders, HungClusterIsDegradedWithItsLastStateAndAge) {
  auto gate = std::make_shared<ReadGate>();
  auto service = DispatchService::create(gated_clean(gate), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  ASSERT_TRUE(service.value()->clusters(10)["clusters"][0]["up"].get<bool>());
  gate->set(false);
  ASSERT_TRUE(wait_for_cluster(*service.value(), 0,
                               [](const json& c) { return c["degraded"].get<bool>(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t0 = SteadyClock::now();
  const DispatchReply r =
      service.value()->dispatch(request(workload("w1", 1, 1, "BE", "0")).dump(), 10);
  EXPECT_LT(seconds_since(t0), 1.5);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["clusters"][0], "dirty");  // clean is left out while dirty is healthy
  EXPECT_EQ(r.body["ranking"][1], json({{"cluster", "clean"}, {"note", "degraded"}}));
  ASSERT_EQ(r.body["degraded_clusters"].size(), 1u) << r.body.dump();
  const json& d = r.body["degraded_clusters"][0];
  EXPECT_EQ(d["name"], "clean");
  EXPECT_TRUE(d["up"].get<bool>());
  EXPECT_TRUE(d["degraded"].get<bool>());
  // The last good read finished before the gate closed, over 0.3 + 0.2 s ago.
  EXPECT_GT(d["age_s"].get<double>(), 0.5);
  EXPECT_NE(d["error"].get<std::string>().find("no answer within 0.3 s"), std::string::npos)
      << d.dump();
  EXPECT_NE(r.body["degraded"][0].get<std::string>().find("cluster clean left out (degraded)"),
            std::string::npos)
      << r.body.dump();
  // Allowed only there, it is decided on clean's last known state (empty: room now).
  json only_clean = request(workload("w3", 1, 1, "BE", "0"));
  only_clean["clusters"] = {"clean"};
  const DispatchReply last_known = service.value()->dispatch(only_clean.dump(), 10);
  ASSERT_EQ(last_known.status, 200) << last_known.body.dump();
  EXPECT_EQ(last_known.body["clusters"][0], "clean");
  EXPECT_EQ(last_known.body["start_after_s"], 0);
  EXPECT_NE(last_known.body["degraded"][0].get<std::string>().find(
                "cluster clean degraded: no answer within 0.3 s"),
            std::string::npos)
      << last_known.body.dump();
  const json view = service.value()->clusters(10)["clusters"][0];
  EXPECT_TRUE(view["degraded"].get<bool>());
  EXPECT_GE(view["age_s"].get<double>(), d["age_s"].get<double>());
  EXPECT_GE(testing::parse_metrics(service.value()->metrics_text(10))
                .at("greensched_dispatch_cluster_state_age_seconds{cluster=\"clean\"}"),
            view["age_s"].get<double>() - 0.001);  // the view's is rounded to 1 ms

  gate->set(true);
  ASSERT_TRUE(wait_for_cluster(*service.value(), 0,
                               [](const json& c) { return !c["degraded"].get<bool>(); }));
  const json fresh = service.value()->clusters(10)["clusters"][0];
  EXPECT_LT(fresh["age_s"].get<double>(), 0.5);
  EXPECT_FALSE(fresh.contains("error"));
  const DispatchReply after =
      service.value()->dispatch(request(workload("w2", 1, 1, "BE", "0")).dump(), 10);
  EXPECT_EQ(after.body["clusters"][0], "clean");
  EXPECT_TRUE(after.body["degraded_clusters"].empty());
}

// A real API server that accepts connections and never answers: the kube client gives up at
// the read's deadline, and decisions never wait for it.
TEST(DispatchReaders, BlackholedApiServerTimesOutAtTheDeadline) {
  testing::ScratchDir dir;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 16), 0);  // connections complete in the backlog; none is answered
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  { std::ofstream(dir.path() + "/token") << "t0ken\n"; }
  DispatchConfig c = two_clusters();
  c.cluster_timeout_seconds = 0.5;
  c.refresh_seconds = 0.2;
  c.sources.resize(2);
  serve::KubeApiOptions api;
  api.server = fmt::format("http://127.0.0.1:{}", port);
  api.token_file = dir.path() + "/token";
  c.sources[1] = make_kube_source(api);
  auto t0 = SteadyClock::now();
  auto service = DispatchService::create(std::move(c), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  EXPECT_LT(seconds_since(t0), 1.5);
  // The client's own deadline ends the read (its error names the request), not the watch
  // for overdue reads.
  ASSERT_TRUE(wait_for_cluster(*service.value(), 1, [](const json& c) {
    return c.value("error", "").find("/api/v1/nodes: no answer within 0.5 s") != std::string::npos;
  })) << service.value()->clusters(10).dump();
  t0 = SteadyClock::now();
  json only_dirty = request(workload("w", 1, 1, "BE", "0"));
  const DispatchReply r = service.value()->dispatch(only_dirty.dump(), 10);
  EXPECT_LT(seconds_since(t0), 1.5);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["clusters"][0], "clean");
  EXPECT_EQ(r.body["degraded_clusters"][0]["name"], "dirty");
  // Asked only about the blackholed one: no cluster can be read, 503 at once.
  only_dirty["clusters"] = {"dirty"};
  t0 = SteadyClock::now();
  EXPECT_EQ(service.value()->dispatch(only_dirty.dump(), 10).status, 503);
  EXPECT_LT(seconds_since(t0), 1.5);
  t0 = SteadyClock::now();
  service.value().reset();
  EXPECT_LT(seconds_since(t0), 1.5);
  ::close(fd);
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> file_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A journal of three decisions ("a", "b", "c" at wall 10, 20, 30; each line a record),
// returned line by line with its newline.
std::vector<std::string> three_records(const std::string& journal) {
  auto service = DispatchService::create(two_clusters(journal), 0);
  EXPECT_TRUE(service.ok()) << service.error();
  for (const char* name : {"a", "b", "c"}) {
    const DispatchReply r =
        service.value()->dispatch(request(workload(name, 1, 1, "BE", "0")).dump(), 10);
    EXPECT_EQ(r.status, 200) << r.body.dump();
  }
  std::vector<std::string> lines;
  for (const std::string& l : file_lines(journal)) lines.push_back(l + "\n");
  EXPECT_EQ(lines.size(), 3u);
  return lines;
}

// two_clusters() with the journal's warnings caught.
DispatchConfig journaled(const std::string& journal, std::vector<std::string>* warnings) {
  DispatchConfig c = two_clusters(journal);
  c.warn = [warnings](const std::string& w) { warnings->push_back(w); };
  return c;
}

bool repeated(DispatchService& service, const std::string& name) {
  const DispatchReply r = service.dispatch(request(workload(name, 1, 1, "BE", "0")).dump(), 40);
  return r.status == 200 && r.body["repeated"].get<bool>();
}

// A crash mid-write leaves a last line without its newline, or not JSON: it is cut off (and
// kept aside) with a warning naming file:line; the decisions before it stand.
// One writer per journal: a second service on the same journal is refused, naming the
// holder's pid; once the first is gone, its lock is free and the journal is taken over.
TEST(DispatchJournal, OneServicePerJournal) {
  testing::ScratchDir dir;
  const std::string path = dir.path() + "/dispatch.jsonl";
  DispatchConfig a = two_clusters();
  a.journal_path = path;
  auto first = DispatchService::create(std::move(a), 0);
  ASSERT_TRUE(first.ok()) << first.error();
  const DispatchReply answer =
      first.value()->dispatch(request(workload("w", 1, 1, "BE", "4h")).dump(), 10);
  ASSERT_EQ(answer.status, 200) << answer.body.dump();

  DispatchConfig b = two_clusters();
  b.journal_path = path;
  auto second = DispatchService::create(std::move(b), 20);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().find(fmt::format("pid {}", ::getpid())), std::string::npos)
      << second.error();
  EXPECT_NE(second.error().find("--standby"), std::string::npos) << second.error();
  std::string held;
  auto waiting = JournalLock::try_acquire(path, &held);
  ASSERT_TRUE(waiting.ok()) << waiting.error();
  EXPECT_EQ(waiting.value(), nullptr);
  EXPECT_NE(held.find(path + ".lock"), std::string::npos) << held;

  first.value().reset();
  auto taken = JournalLock::try_acquire(path, &held);
  ASSERT_TRUE(taken.ok()) << taken.error();
  ASSERT_NE(taken.value(), nullptr);
  DispatchConfig c = two_clusters();
  c.journal_path = path;
  c.journal_lock = std::move(taken.value());
  auto standby = DispatchService::create(std::move(c), 30);
  ASSERT_TRUE(standby.ok()) << standby.error();
  const DispatchReply again =
      standby.value()->dispatch(request(workload("w", 1, 1, "BE", "4h")).dump(), 40);
  ASSERT_EQ(again.status, 200) << again.body.dump();
  EXPECT_EQ(again.body["clusters"], answer.body["clusters"]);
  EXPECT_EQ(again.body["repeated"], true);
}

TEST(DispatchJournal, TornLastLineIsCutOffWithAWarning) {
  testing::ScratchDir dir;
  const std::string journal = dir.path() + "/j.jsonl";
  const std::vector<std::string> lines = three_records(journal);
  const std::string two = lines[0] + lines[1];
  struct Case {
    std::string tail, why;
  };
  // A record without its newline, half a record, a garbage line with its newline.
  for (const Case& c : {Case{lines[2].substr(0, lines[2].size() - 1), "no newline at its end"},
                        Case{lines[2].substr(0, 40), "not JSON"}, Case{"x\n", "not JSON"}}) {
    std::filesystem::remove(journal + ".rejected");
    write_file(journal, two + c.tail);
    std::vector<std::string> warnings;
    auto service = DispatchService::create(journaled(journal, &warnings), 40);
    ASSERT_TRUE(service.ok()) << service.error();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(journal + ":3: torn last line cut off (" + c.why), std::string::npos)
        << warnings[0];
    EXPECT_EQ(file_text(journal), two);
    std::string kept = c.tail;
    if (kept.back() != '\n') kept += '\n';
    EXPECT_EQ(file_text(journal + ".rejected"), kept);
    EXPECT_TRUE(repeated(*service.value(), "a"));
    EXPECT_TRUE(repeated(*service.value(), "b"));
    EXPECT_FALSE(repeated(*service.value(), "c"));  // never answered: decided anew
  }
}

// A bad line before the last refuses the start, naming file:line and what is wrong, and
// changes nothing.
TEST(DispatchJournal, CorruptLineInsideRefusesToStart) {
  testing::ScratchDir dir;
  const std::string journal = dir.path() + "/j.jsonl";
  const std::vector<std::string> lines = three_records(journal);
  struct Case {
    std::string line, why;
  };
  json no_service = json::parse(lines[1]);
  no_service.erase("service");
  for (const Case& c :
       {Case{"{\"kind\": \"dispatch\", oops\n", "not JSON"},
        Case{no_service.dump() + "\n", "service: missing"},
        Case{"{\"kind\":\"dispatch\",\"pod\":\"x\"}\n", "not a decision record: request"}}) {
    const std::string text = lines[0] + c.line + lines[2];
    write_file(journal, text);
    std::vector<std::string> warnings;
    auto service = DispatchService::create(journaled(journal, &warnings), 40);
    ASSERT_FALSE(service.ok());
    EXPECT_NE(service.error().find(journal + ":2: " + c.why), std::string::npos) << service.error();
    EXPECT_NE(service.error().find("--record-repair"), std::string::npos);
    EXPECT_EQ(file_text(journal), text);
    EXPECT_FALSE(std::filesystem::exists(journal + ".rejected"));
  }
}

// --record-repair moves exactly the bad lines (a torn last one too) to <journal>.rejected,
// appended after what it held, and says so; the good lines stand.
TEST(DispatchJournal, RepairMovesExactlyTheBadLines) {
  testing::ScratchDir dir;
  const std::string journal = dir.path() + "/j.jsonl";
  const std::vector<std::string> lines = three_records(journal);
  write_file(journal, lines[0] + "{not json\n" + lines[1] + "{\"pod\": 3}\n\n" + lines[2] +
                          "{\"kind\":\"disp");
  write_file(journal + ".rejected", "earlier\n");
  std::vector<std::string> warnings;
  DispatchConfig c = journaled(journal, &warnings);
  c.journal_repair = true;
  auto service = DispatchService::create(std::move(c), 40);
  ASSERT_TRUE(service.ok()) << service.error();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(fmt::format("journal {}: moved 3 bad lines to {}.rejected (line 2: "
                                         "not JSON",
                                         journal, journal)),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("line 4: "), std::string::npos);
  EXPECT_NE(warnings[0].find("line 7: "), std::string::npos);
  EXPECT_EQ(file_text(journal), lines[0] + lines[1] + lines[2]);
  EXPECT_EQ(file_text(journal + ".rejected"),
            "earlier\n{not json\n{\"pod\": 3}\n{\"kind\":\"disp\n");
  for (const char* name : {"a", "b", "c"}) EXPECT_TRUE(repeated(*service.value(), name)) << name;
}

// Compaction keeps exactly the decisions still standing (as explain reads them); a service
// restarted on the compacted journal answers as one restarted on the whole journal, old
// workloads and new alike.
TEST(DispatchJournal, CompactionKeepsTheStandingDecisionsAndAnswersTheSame) {
  testing::ScratchDir dir;
  const std::string whole = dir.path() + "/whole.jsonl";
  const std::string compacted = dir.path() + "/compacted.jsonl";
  const auto run = [](DispatchService& s) {
    // "a" and "b" fill "clean" now (until 130); "c" waits there for them (deferred ~2 h,
    // standing until after its start); "d" at 200 and "e" at 400 take "clean" now, each
    // ending 120 s after.
    std::vector<json> replies;
    for (const auto& [name, slack, wall] :
         {std::tuple{"a", "0", 10}, std::tuple{"b", "0", 10}, std::tuple{"c", "4h", 10},
          std::tuple{"d", "0", 200}, std::tuple{"e", "0", 400}}) {
      const DispatchReply r = s.dispatch(request(workload(name, 2, 2, "BE", slack)).dump(), wall);
      EXPECT_EQ(r.status, 200) << r.body.dump();
      replies.push_back(r.body);
    }
    return replies;
  };
  DispatchConfig never = two_clusters(whole);
  never.journal_compact_bytes = 0;
  never.journal_compact_age_s = 0;
  DispatchConfig by_age = two_clusters(compacted);
  by_age.journal_compact_bytes = 0;
  by_age.journal_compact_age_s = 300;  // due at 400: 300 s after the journal was opened
  {
    auto a = DispatchService::create(std::move(never), 0);
    auto b = DispatchService::create(std::move(by_age), 0);
    ASSERT_TRUE(a.ok() && b.ok());
    const std::vector<json> ra = run(*a.value());
    EXPECT_EQ(ra[2]["clusters"][0], "clean");
    EXPECT_GT(ra[2]["start_after_s"].get<int64_t>(), 3600);
    EXPECT_EQ(ra, run(*b.value()));
  }
  EXPECT_EQ(file_lines(whole).size(), 5u);
  const std::vector<std::string> kept = file_lines(compacted);
  ASSERT_EQ(kept.size(), 2u);
  const std::vector<std::string> all = file_lines(whole);
  EXPECT_EQ(json::parse(kept[0]), json::parse(all[2]));  // "c", deferred, still standing
  // "e", until 520, the newest: with what the agent (green-plan) had learned of all five.
  json newest = json::parse(kept[1]);
  EXPECT_EQ(newest["service"]["agent_state"]["state"]["history"]["jobs"], 5.0);
  newest["service"].erase("agent_state");
  EXPECT_EQ(newest, json::parse(all[4]));
  for (const std::string& line : kept) {
    auto record = explain::parse_decision_record(line, "compacted");
    ASSERT_TRUE(record.ok()) << record.error();
  }

  auto a = DispatchService::create(two_clusters(whole), 450);
  auto b = DispatchService::create(two_clusters(compacted), 450);
  ASSERT_TRUE(a.ok() && b.ok());
  for (const auto& [name, slack] :
       {std::pair{"c", "4h"}, std::pair{"e", "0"}, std::pair{"d", "0"}, std::pair{"f", "4h"}}) {
    const std::string body = request(workload(name, 2, 2, "BE", slack)).dump();
    const DispatchReply ra = a.value()->dispatch(body, 450);
    EXPECT_EQ(ra.body, b.value()->dispatch(body, 450).body) << name;
    EXPECT_EQ(ra.body["repeated"].get<bool>(), std::string(name) == "c" || std::string(name) == "e")
        << name;
  }
  const auto without_ages = [](json view) {
    for (json& c : view["clusters"]) c.erase("age_s");  // how long ago each was read
    return view;
  };
  EXPECT_EQ(without_ages(a.value()->clusters(450)), without_ages(b.value()->clusters(450)));
}

// Past its size the journal is rewritten to the standing decisions: it no longer only grows.
TEST(DispatchJournal, CompactionBySizeBoundsTheJournal) {
  testing::ScratchDir dir;
  const std::string journal = dir.path() + "/j.jsonl";
  DispatchConfig c = two_clusters(journal);
  c.journal_compact_bytes = 1;
  auto service = DispatchService::create(std::move(c), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  std::size_t most = 0;
  for (int i = 0; i < 12; ++i) {  // each ends (120 s) before the next
    const DispatchReply r = service.value()->dispatch(
        request(workload(fmt::format("w{}", i), 1, 1, "BE", "0")).dump(), 10 + 200 * i);
    ASSERT_EQ(r.status, 200) << r.body.dump();
    most = std::max(most, file_lines(journal).size());
  }
  EXPECT_LE(most, 3u);
  // The count of decisions survives: a restart's next decision is step 12.
  service.value().reset();
  auto restarted = DispatchService::create(two_clusters(journal), 10 + 200 * 12);
  ASSERT_TRUE(restarted.ok()) << restarted.error();
  ASSERT_EQ(restarted.value()
                ->dispatch(request(workload("next", 1, 1, "BE", "0")).dump(), 10 + 200 * 12)
                .status,
            200);
  EXPECT_EQ(json::parse(file_lines(journal).back())["step"], 12);
}

// The newest record is kept when it no longer stands: its step carries the decision count.
TEST(DispatchJournal, CompactionKeepsTheNewestRecordForTheCount) {
  testing::ScratchDir dir;
  const std::string journal = dir.path() + "/j.jsonl";
  const std::vector<std::string> lines = three_records(journal);
  std::vector<json> records;
  JournalOptions options;
  options.path = journal;
  auto j = DecisionJournal::open(options, 40, &records);
  ASSERT_TRUE(j.ok()) << j.error();
  ASSERT_EQ(records.size(), 3u);
  ASSERT_TRUE(j.value()->compact({records[0]}, 40).ok());
  EXPECT_EQ(file_text(journal), records[0].dump() + "\n" + records[2].dump() + "\n");
  ASSERT_TRUE(j.value()->compact({records[0], records[2]}, 40).ok());
  EXPECT_EQ(file_text(journal), records[0].dump() + "\n" + records[2].dump() + "\n");
  EXPECT_EQ(j.value()->compactions(), 2u);
  EXPECT_EQ(journal_record_problem(records[1]), "");
}

// Three sites of one 8-GPU T4 node each, constant carbon: clean 100, mid 200, dirty 300.
DispatchConfig three_clusters(const std::string& journal = "") {
  DispatchConfig c = two_clusters(journal);
  multi::SiteSpec mid = c.fleet.sites[0];
  mid.name = "mid";
  mid.nodes[0].name = "mid/n0";
  mid.carbon = multi::TimeSeries(1672531200, 3600, {200.0});
  c.fleet.sites.insert(c.fleet.sites.begin() + 1, std::move(mid));
  return c;
}

json renominate(const std::string& name, const std::string& reason, const std::string& from,
                const std::vector<std::string>& exclude = {}) {
  json r = request(workload(name, 2, 2, "BE", "0"));
  r["renominate"] = {{"reason", reason}, {"from", from}};
  if (!exclude.empty()) r["exclude"] = exclude;
  return r;
}

std::vector<std::string> committed_at(DispatchService& service, std::size_t site) {
  std::vector<std::string> out;
  const json view = service.clusters(10);
  for (const json& c : view["clusters"][site]["committed"]) {
    out.push_back(c["workload"].get<std::string>());
  }
  return out;
}

// Each workload: 2 pods x 2 GPUs, no slack. "a" and "b" fill "clean"; "b" re-nominated away
// from clean goes to "mid" (the cleaner of the rest), and its GPUs no longer count at clean:
// "c" then fits at clean. Excluding clean and leaving mid sends "b" to "dirty"; with every
// cluster excluded or left, 409 and nothing changes. A restart restores the newest decision.
TEST(DispatchRenominate, DecidesAgainWithoutTheClusterItLeaves) {
  testing::ScratchDir dir;
  const std::string journal = dir.path() + "/j.jsonl";
  auto service = DispatchService::create(three_clusters(journal), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  DispatchService& s = *service.value();
  for (const char* name : {"a", "b"}) {
    const DispatchReply r = s.dispatch(request(workload(name, 2, 2, "BE", "0")).dump(), 10);
    ASSERT_EQ(r.body["clusters"][0], "clean") << r.body.dump();
    EXPECT_FALSE(r.body["renominated"].get<bool>());
  }
  const DispatchReply moved = s.dispatch(renominate("b", "worker-lost", "clean").dump(), 10);
  ASSERT_EQ(moved.status, 200) << moved.body.dump();
  EXPECT_EQ(moved.body["clusters"][0], "mid");
  EXPECT_TRUE(moved.body["renominated"].get<bool>());
  EXPECT_FALSE(moved.body["repeated"].get<bool>());
  EXPECT_EQ(moved.body["renomination"], json({{"reason", "worker-lost"}, {"from", "clean"}}));
  EXPECT_EQ(committed_at(s, 0), std::vector<std::string>{"team-a/a"});
  EXPECT_EQ(committed_at(s, 1), std::vector<std::string>{"team-a/b"});
  const DispatchReply c = s.dispatch(request(workload("c", 2, 2, "BE", "0")).dump(), 10);
  EXPECT_EQ(c.body["clusters"][0], "clean") << c.body.dump();
  // Asked again as usual, the new decision stands.
  const DispatchReply again = s.dispatch(request(workload("b", 2, 2, "BE", "0")).dump(), 10);
  EXPECT_EQ(again.body["clusters"][0], "mid");
  EXPECT_TRUE(again.body["repeated"].get<bool>());

  const DispatchReply dirty =
      s.dispatch(renominate("b", "admit-timeout", "mid", {"clean"}).dump(), 10);
  ASSERT_EQ(dirty.status, 200) << dirty.body.dump();
  EXPECT_EQ(dirty.body["clusters"][0], "dirty");
  EXPECT_EQ(dirty.body["renomination"]["reason"], "admit-timeout");
  const DispatchReply none =
      s.dispatch(renominate("b", "unschedulable", "dirty", {"clean", "mid"}).dump(), 10);
  EXPECT_EQ(none.status, 409) << none.body.dump();
  EXPECT_NE(none.body["error"].get<std::string>().find("no cluster remains"), std::string::npos);
  EXPECT_EQ(committed_at(s, 2), std::vector<std::string>{"team-a/b"});  // unchanged

  // Journaled with what changed; every line still a record explain reads.
  const std::vector<std::string> lines = file_lines(journal);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_FALSE(json::parse(lines[1]).contains("renominated"));
  EXPECT_EQ(json::parse(lines[2])["renominated"],
            json({{"reason", "worker-lost"}, {"from", "clean"}}));
  EXPECT_EQ(json::parse(lines[4])["renominated"],
            json({{"reason", "admit-timeout"}, {"from", "mid"}}));
  for (const std::string& line : lines) {
    ASSERT_TRUE(explain::parse_decision_record(line, "j").ok()) << line;
  }
  const auto metrics = testing::parse_metrics(s.metrics_text(10));
  EXPECT_EQ(metrics.at("greensched_dispatch_renominations_total{reason=\"worker-lost\"}"), 1);
  EXPECT_EQ(metrics.at("greensched_dispatch_renominations_total{reason=\"admit-timeout\"}"), 1);
  EXPECT_EQ(metrics.at("greensched_dispatch_renominations_total{reason=\"unschedulable\"}"), 0);
  EXPECT_EQ(metrics.at("greensched_dispatch_requests_total{code=\"409\"}"), 1);

  service.value().reset();
  auto restarted = DispatchService::create(three_clusters(journal), 20);
  ASSERT_TRUE(restarted.ok()) << restarted.error();
  EXPECT_EQ(committed_at(*restarted.value(), 0),
            (std::vector<std::string>{"team-a/a", "team-a/c"}));
  EXPECT_TRUE(committed_at(*restarted.value(), 1).empty());
  EXPECT_EQ(committed_at(*restarted.value(), 2), std::vector<std::string>{"team-a/b"});
  const DispatchReply after =
      restarted.value()->dispatch(request(workload("b", 2, 2, "BE", "0")).dump(), 20);
  EXPECT_EQ(after.body["clusters"][0], "dirty");
  EXPECT_TRUE(after.body["repeated"].get<bool>());
  EXPECT_TRUE(after.body["renominated"].get<bool>());
}

// A workload with no standing decision may be re-nominated too; bad fields are 400.
TEST(DispatchRenominate, BadRequestsAre400) {
  auto service = DispatchService::create(three_clusters(), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  DispatchService& s = *service.value();
  const DispatchReply fresh = s.dispatch(renominate("new", "worker-lost", "clean").dump(), 10);
  ASSERT_EQ(fresh.status, 200) << fresh.body.dump();
  EXPECT_EQ(fresh.body["clusters"][0], "mid");
  const auto error = [&](const json& body) {
    const DispatchReply r = s.dispatch(body.dump(), 10);
    EXPECT_EQ(r.status, 400) << body.dump();
    return r.body.value("error", "");
  };
  EXPECT_NE(error(renominate("x", "bored", "clean"))
                .find("renominate.reason: 'bored' is not one "
                      "of worker-lost, admit-timeout, "
                      "unschedulable"),
            std::string::npos);
  EXPECT_NE(error(renominate("x", "worker-lost", "mars")).find("renominate.from: unknown cluster"),
            std::string::npos);
  json no_from = renominate("x", "worker-lost", "clean");
  no_from["renominate"].erase("from");
  EXPECT_NE(error(no_from).find("renominate.from: missing"), std::string::npos);
  json bad_exclude = request(workload("x", 1, 1));
  bad_exclude["exclude"] = {"mars"};
  EXPECT_NE(error(bad_exclude).find("exclude: unknown cluster 'mars'"), std::string::npos);
  // Without a re-nomination, excluding every cluster is a conflict too.
  json all_out = request(workload("x", 1, 1));
  all_out["exclude"] = {"clean", "mid", "dirty"};
  EXPECT_EQ(s.dispatch(all_out.dump(), 10).status, 409);
  // Exclusion alone moves a standing decision off the excluded cluster, not re-nominated.
  json off_mid = request(workload("new", 2, 2, "BE", "0"));
  off_mid["exclude"] = {"mid"};
  const DispatchReply moved = s.dispatch(off_mid.dump(), 10);
  EXPECT_EQ(moved.body["clusters"][0], "clean");
  EXPECT_FALSE(moved.body["renominated"].get<bool>());
}

// The /metrics histograms are cumulative over their buckets and end at +Inf = _count.
void expect_histogram(const std::map<std::string, double>& m, const std::string& name,
                      const std::string& labels, double count) {
  const std::string sep = labels.empty() ? "" : ",";
  double last = 0;
  int buckets = 0;
  for (const auto& [series, value] : m) {
    if (series.rfind(name + "_bucket{" + labels + sep + "le=", 0) != 0) continue;
    if (series.find("+Inf") != std::string::npos) continue;
    ++buckets;
    EXPECT_LE(value, count) << series;
    last = std::max(last, value);
  }
  EXPECT_GT(buckets, 5) << name;
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  EXPECT_EQ(m.at(name + "_bucket{" + labels + sep + "le=\"+Inf\"}"), count) << name;
  EXPECT_EQ(m.at(name + "_count" + braces), count) << name;
  EXPECT_EQ(last, count) << name << ": every observation is under the largest bound";
  EXPECT_GT(m.at(name + "_sum" + braces), 0) << name;
}

// Hand-counted: 0.1 and 0.5 fall at or under 0.5, 0.7 under 1, 3 only under +Inf.
TEST(DispatchMetrics, HistogramTextIsCumulative) {
  PrometheusHistogram h({0.5, 1});
  for (double v : {0.7, 0.1, 3.0, 0.5}) h.observe(v);
  std::string text;
  h.render(text, "x_seconds", "cluster=\"a\"");
  EXPECT_EQ(text,
            "x_seconds_bucket{cluster=\"a\",le=\"0.5\"} 2\n"
            "x_seconds_bucket{cluster=\"a\",le=\"1\"} 3\n"
            "x_seconds_bucket{cluster=\"a\",le=\"+Inf\"} 4\n"
            "x_seconds_sum{cluster=\"a\"} 4.3\n"
            "x_seconds_count{cluster=\"a\"} 4\n");
  std::string bare;
  PrometheusHistogram({1}).render(bare, "y", "");
  EXPECT_EQ(bare, "y_bucket{le=\"1\"} 0\ny_bucket{le=\"+Inf\"} 0\ny_sum 0\ny_count 0\n");
}

TEST(DispatchMetrics, DecisionAndReadHistogramsAgesAndDeferredWorkloads) {
  DispatchConfig c = two_clusters();
  c.refresh_seconds = 0.05;
  auto service = DispatchService::create(std::move(c), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  DispatchService& s = *service.value();
  // "a" and "b" fill "clean" now; "c" waits there for them (about 2 h).
  int64_t c_start = 0;
  for (const auto& [name, slack] :
       {std::pair{"a", "0"}, std::pair{"b", "0"}, std::pair{"c", "4h"}}) {
    const DispatchReply r = s.dispatch(request(workload(name, 2, 2, "BE", slack)).dump(), 10);
    ASSERT_EQ(r.status, 200) << r.body.dump();
    c_start = 10 + r.body["start_after_s"].get<int64_t>();
  }
  ASSERT_GT(c_start, 3600);
  EXPECT_EQ(s.dispatch("[", 10).status, 400);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a few more reads

  const auto m = testing::parse_metrics(s.metrics_text(10));
  expect_histogram(m, "greensched_dispatch_decision_seconds", "", 4);
  for (const char* cluster : {"clean", "dirty"}) {
    const std::string labels = fmt::format("cluster=\"{}\"", cluster);
    const double reads = m.at("greensched_dispatch_cluster_read_seconds_count{" + labels + "}");
    EXPECT_GE(reads, 3) << cluster;  // the first, and every 0.05 s since
    expect_histogram(m, "greensched_dispatch_cluster_read_seconds", labels, reads);
    const double age = m.at("greensched_dispatch_cluster_state_age_seconds{" + labels + "}");
    EXPECT_GE(age, 0);
    EXPECT_LT(age, 1);
  }
  EXPECT_EQ(m.at("greensched_dispatch_deferred_workloads"), 1);
  // Once its start has come, "c" is no longer deferred; "a" and "b" never were.
  EXPECT_EQ(testing::parse_metrics(s.metrics_text(c_start - 1))
                .at("greensched_dispatch_deferred_workloads"),
            1);
  EXPECT_EQ(
      testing::parse_metrics(s.metrics_text(c_start)).at("greensched_dispatch_deferred_workloads"),
      0);
  const std::string text = s.metrics_text(10);
  EXPECT_NE(text.find("# TYPE greensched_dispatch_decision_seconds histogram\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE greensched_dispatch_cluster_read_seconds histogram\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE greensched_dispatch_cluster_state_age_seconds gauge\n"),
            std::string::npos);
}

// Three sites with T4 and V100 nodes and hourly carbon that differs by site and hour.
multi::Fleet three_sites() {
  multi::Fleet fleet;
  const GpuModelId t4 = *fleet.models.intern("T4");
  const GpuModelId v100 = *fleet.models.intern("V100M32");
  const char* names[] = {"north", "island", "south"};
  for (int i = 0; i < 3; ++i) {
    multi::SiteSpec s;
    s.name = names[i];
    for (int n = 0; n < 3; ++n) {
      s.nodes.push_back(NodeSpec{fmt::format("{}/t4-{}", s.name, n), 32000, 131072, 2, t4});
      s.nodes.push_back(NodeSpec{fmt::format("{}/v100-{}", s.name, n), 96000, 393216, 8, v100});
    }
    std::vector<double> ci;
    for (int h = 0; h < 24 * 14; ++h) {
      ci.push_back(200 + 120 * std::sin((h + 7 * i) * 0.37) + 60 * i);
    }
    s.carbon = multi::TimeSeries(fleet.start_s, 3600, ci);
    s.pue = 1.1 + 0.1 * i;
    fleet.sites.push_back(std::move(s));
  }
  return fleet;
}

// The workload of one simulated job: `cpu` milli and `gpus` whole GPUs (milli 1000) or one
// share of `milli`, submitted at `home`, running `duration` with 30 GB of data.
json sim_job_workload(const std::string& name, int cpu, int gpus, int milli, int64_t slack_s,
                      const std::string& home, const std::string& duration) {
  json w = workload(name, 1, 0, "BE", std::to_string(slack_s));
  json& requests = w["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"];
  requests["requests"] = {{"cpu", fmt::format("{}m", cpu)}, {"memory", "1Gi"}};
  if (milli == 1000) {
    requests["requests"]["nvidia.com/gpu"] = std::to_string(gpus);
  } else {
    requests["requests"]["alibabacloud.com/gpu-milli"] = std::to_string(milli);
  }
  w["metadata"]["annotations"]["greensched.io/home"] = home;
  w["metadata"]["annotations"]["greensched.io/duration"] = duration;
  w["metadata"]["annotations"]["greensched.io/data-gb"] = "30";
  return w;
}

// One code path: for a job on a fleet at rest, the service's answer is the decision `multi`
// makes for the same job at the same time, site and start alike, over job shapes, homes,
// slacks and hours of the day. (Given the same FGD target workload and seed: the sites break
// ties between equal nodes in the order the simulator draws.)
TEST(DispatchService, AnswersAsTheSimulatorDecidesOnTheSameState) {
  struct Case {
    int cpu, gpus, milli;
    int64_t submit_s, slack_s;
  };
  const Case cases[] = {
      {4000, 1, 1000, 3600 * 5, 0},          {8000, 2, 1000, 3600 * 30, 4 * 3600},
      {2000, 1, 500, 3600 * 50, 12 * 3600},  {16000, 8, 1000, 3600 * 77, 4 * 3600},
      {4000, 1, 250, 3600 * 101, 12 * 3600}, {8000, 4, 1000, 3600 * 140, 0}};
  int compared = 0;
  for (const Case& c : cases) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      std::vector<PodSpec> pods = {testing::test_pod("job", c.cpu, c.gpus, c.milli)};
      pods[0].creation_time = c.submit_s;
      pods[0].deletion_time = c.submit_s + 3 * 3600;
      pods[0].qos = Qos::kBE;
      const uint32_t shapes = trace::assign_shape_ids(pods);
      multi::MultiOptions options;
      options.agent = "green";
      options.seed = seed;
      options.be_slack_s = c.slack_s;
      options.data_gb_per_job = 30;
      options.record = true;
      const multi::Fleet fleet = three_sites();
      auto sim = multi::run_fleet(fleet, pods, shapes, options);
      ASSERT_TRUE(sim.ok()) << sim.error();
      const multi::JobDecision& want = sim.value().decisions[0];

      DispatchConfig config;
      config.fleet = three_sites();
      config.agent = "green";
      config.clock = SignalClock(fleet.start_s + c.submit_s, 1, 0);
      config.target = frag::build_target_workload(pods);  // FGD's, as the simulator's
      config.seed = seed;                                 // the sites' tie orders
      testing::ScratchDir dir;
      config.journal_path = dir.path() + "/dispatch.jsonl";
      auto service = DispatchService::create(std::move(config), 0);
      ASSERT_TRUE(service.ok()) << service.error();
      const json w = sim_job_workload("job", c.cpu, c.gpus, c.milli, c.slack_s,
                                      fleet.sites[want.home_site].name, "3h");
      const DispatchReply got = service.value()->dispatch(request(w).dump(), 0);
      ASSERT_EQ(got.status, 200) << got.body.dump();
      EXPECT_EQ(got.body["clusters"][0], fleet.sites[want.site].name)
          << "seed " << seed << " submit " << c.submit_s << ": " << got.body["reason"]
          << " | sim: " << want.reason;
      EXPECT_EQ(got.body["deferred_signal_s"].get<int64_t>(), want.not_before_s - c.submit_s)
          << "seed " << seed << " submit " << c.submit_s;
      // And the explanation says the same of it, but for what only each side knows: the
      // simulator what then happened, the service its Workload's name.
      json simulated = json::parse(sim.value().records.substr(0, sim.value().records.find('\n')));
      std::ifstream in(dir.path() + "/dispatch.jsonl");
      std::string line;
      ASSERT_TRUE(std::getline(in, line));
      json served = json::parse(line);
      for (const char* key : {"start_s", "end_s", "run_ci", "chosen_node", "forecast", "actual",
                              "redispatch", "run", "step"}) {
        simulated.erase(key);
      }
      for (const char* key : {"service", "step"}) served.erase(key);
      served["pod"] = simulated["pod"];
      EXPECT_EQ(explain::explain_text(served), explain::explain_text(simulated))
          << "seed " << seed << " submit " << c.submit_s;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 18);
}

// A stream of 36 best-effort jobs over four and a half days, two hours each, one every three
// hours, six shapes in turn, with 4 h of slack.
struct StreamShape {
  int cpu, gpus, milli;
};
constexpr StreamShape kStreamShapes[] = {{4000, 1, 1000},  {8000, 2, 1000}, {2000, 1, 500},
                                         {16000, 8, 1000}, {4000, 1, 250},  {8000, 4, 1000}};
constexpr int64_t kStreamSlack = 4 * 3600;

std::vector<PodSpec> stream_pods() {
  std::vector<PodSpec> pods;
  for (int j = 0; j < 36; ++j) {
    const StreamShape& sh = kStreamShapes[j % 6];
    const std::string name = fmt::format("job-{:02}", j);
    PodSpec p = testing::test_pod(name.c_str(), sh.cpu, sh.gpus, sh.milli);
    p.creation_time = 3600 * (2 + 3 * j) + 600 * (j % 3);
    p.deletion_time = p.creation_time + 2 * 3600;
    p.qos = Qos::kBE;
    pods.push_back(p);
  }
  return pods;
}

// How the service meets the stream: in one run, or stopped after the first `restart_after`
// jobs and started again from its journal (compacted to a few records first with
// `compact`; with `forget_agent` the journal's agent lines are removed before the restart,
// as a journal written before they existed).
struct StreamRun {
  int restart_after = -1;
  bool compact = false;
  bool forget_agent = false;
};

// Each job whose answer (cluster, deferral or reason) differs from `multi`'s decision.
std::vector<std::string> stream_differences(const std::string& agent, StreamRun run,
                                            const std::filesystem::path& dir) {
  std::vector<PodSpec> pods = stream_pods();
  const uint32_t shapes = trace::assign_shape_ids(pods);
  multi::MultiOptions options;
  options.agent = agent;
  options.seed = 1;
  options.be_slack_s = kStreamSlack;
  options.data_gb_per_job = 30;
  const multi::Fleet fleet = three_sites();
  auto sim = multi::run_fleet(fleet, pods, shapes, options);
  if (!sim.ok()) return {sim.error()};
  std::map<std::string, multi::JobDecision> want;
  for (const multi::JobDecision& d : sim.value().decisions) want[d.pod] = d;
  if (want.size() != pods.size()) return {"multi decided for fewer jobs than it was given"};
  // Decisions worth comparing: some jobs leave home, some wait for cleaner hours.
  int moved = 0, deferred_jobs = 0;
  for (const auto& [name, d] : want) {
    moved += d.site != d.home_site ? 1 : 0;
    deferred_jobs += d.not_before_s > d.submit_s ? 1 : 0;
  }
  EXPECT_GT(moved, 0) << agent;
  EXPECT_GT(deferred_jobs, 0) << agent;

  const std::string journal = (dir / "journal.jsonl").string();
  const auto start = [&](int64_t wall_now_s) {
    DispatchConfig config;
    config.fleet = three_sites();
    config.agent = agent;
    config.clock = SignalClock(fleet.start_s, 1, 0);
    config.target = frag::build_target_workload(pods);
    config.seed = 1;
    config.commit_seconds = kStreamSlack + 2 * 3600;
    if (run.restart_after >= 0) {
      config.journal_path = journal;
      config.journal_compact_bytes = run.compact ? 1 : 0;
      config.journal_compact_age_s = 0;
    }
    auto service = DispatchService::create(std::move(config), wall_now_s);
    EXPECT_TRUE(service.ok()) << service.error();
    return service.ok() ? std::move(service.value()) : nullptr;
  };
  std::unique_ptr<DispatchService> service = start(0);
  std::vector<std::string> differences;
  for (std::size_t j = 0; j < pods.size() && service; ++j) {
    if (static_cast<int>(j) == run.restart_after) {
      service.reset();
      std::ifstream in(journal);
      std::string text, line;
      std::size_t lines = 0, with_state = 0;
      while (std::getline(in, line)) {
        json r = json::parse(line);
        ++lines;
        with_state += r["service"].contains("agent_state") ? 1 : 0;
        if (run.forget_agent) {
          r["service"].erase("observed");
          r["service"].erase("agent_state");
        }
        text += r.dump() + "\n";
      }
      in.close();
      if (run.compact) {
        EXPECT_LT(lines, j) << "compacted to the decisions standing";
        EXPECT_EQ(with_state, 1U) << "the newest record carries the agent's state";
      } else {
        EXPECT_EQ(lines, j);
        EXPECT_EQ(with_state, 0U);
      }
      std::ofstream(journal, std::ios::trunc) << text;
      service = start(pods[j].creation_time);
      if (!service) break;
    }
    const PodSpec& p = pods[j];
    const StreamShape& sh = kStreamShapes[j % 6];
    const multi::JobDecision& d = want.at(p.name);
    const json w = sim_job_workload(p.name, sh.cpu, sh.gpus, sh.milli, kStreamSlack,
                                    fleet.sites[d.home_site].name, "2h");
    const DispatchReply got = service->dispatch(request(w).dump(), p.creation_time);
    if (got.status != 200) return {got.body.dump()};
    const std::string site = got.body["clusters"][0];
    const int64_t deferred = got.body["deferred_signal_s"].get<int64_t>();
    // The reason too: green-plan's names the GPUs its plan expects at the chosen site, which
    // it forecasts from the arrivals it has seen.
    if (site != fleet.sites[d.site].name || deferred != d.not_before_s - d.submit_s ||
        got.body["reason"] != d.reason) {
      differences.push_back(
          fmt::format("{} {}: service {} +{} s ({}) | multi {} +{} s ({})", agent, p.name, site,
                      deferred, got.body["reason"].get<std::string>(), fleet.sites[d.site].name,
                      d.not_before_s - d.submit_s, d.reason));
    }
  }
  return differences;
}

// The same agent over a stream: the jobs arrive through the service one after another as they
// do in `multi`, and each answer is the simulator's decision for that job, reason included.
// The service keeps its agent between requests, so green-plan's arrival history and plan carry
// over as in the simulator (a fresh agent per request plans with no history, and its reasons
// say so). A dispatched job's GPUs count at its cluster over its planned run (commit_seconds
// covers it), as a running job's do in the simulator. The fleet is lightly loaded: the live
// view counts a commitment as GPUs at its site, not as a pod on a node, so once jobs overlap
// on shared nodes the two views' power and packing differ.
TEST(DispatchService, AStreamOfJobsGetsTheSimulatorsDecisionsForGreenAndGreenPlan) {
  testing::ScratchDir dir;
  for (const std::string agent : {"green", "green-plan"}) {
    const std::vector<std::string> differences = stream_differences(agent, {}, dir.path());
    EXPECT_TRUE(differences.empty()) << fmt::format("{}", fmt::join(differences, "\n"));
  }
}

// What green-plan learned survives a restart: stopped after 18 of the 36 jobs and started
// from its journal (as a standby takes over), the service still answers every job as `multi`
// does, whether the journal holds every decision (each one's "observed" job is taught to the
// agent again) or was compacted to a few records (the newest carrying the agent's state). A
// journal without them, as written before, restores the commitments but not the history:
// some later answer differs (the plan forecasts from fewer arrivals).
TEST(DispatchService, GreenPlansHistorySurvivesARestartFromTheJournal) {
  for (const bool compact : {false, true}) {
    testing::ScratchDir dir(compact ? "-compact" : "");
    const std::vector<std::string> differences =
        stream_differences("green-plan", {.restart_after = 18, .compact = compact}, dir.path());
    EXPECT_TRUE(differences.empty())
        << (compact ? "compacted: " : "") << fmt::format("{}", fmt::join(differences, "\n"));
  }
  testing::ScratchDir dir("-forget");
  const std::vector<std::string> forgot =
      stream_differences("green-plan", {.restart_after = 18, .forget_agent = true}, dir.path());
  EXPECT_FALSE(forgot.empty()) << "the restart test cannot tell a forgetful agent";
}

// A journal's agent state that does not fit (another agent's, or a fleet of another size) is
// not restored: the service starts, says why, and the agent starts afresh.
TEST(DispatchService, AnAgentStateThatDoesNotFitIsLeftWithAWarning) {
  testing::ScratchDir dir;
  const std::string journal = (std::filesystem::path(dir.path()) / "journal.jsonl").string();
  const auto start = [&](const std::string& agent, std::vector<std::string>* warnings) {
    DispatchConfig config;
    config.fleet = three_sites();
    config.agent = agent;
    config.clock = SignalClock(config.fleet.start_s, 1, 0);
    config.journal_path = journal;
    config.journal_compact_bytes = 1;
    config.journal_compact_age_s = 0;
    config.warn = [warnings](const std::string& m) { warnings->push_back(m); };
    return DispatchService::create(std::move(config), 7200);
  };
  {
    std::vector<std::string> warnings;
    auto service = start("green-plan", &warnings);
    ASSERT_TRUE(service.ok()) << service.error();
    const json w = sim_job_workload("job", 4000, 1, 1000, 3600, "north", "2h");
    ASSERT_EQ(service.value()->dispatch(request(w).dump(), 7200).status, 200);
  }
  std::ifstream in(journal);
  json last;
  for (std::string line; std::getline(in, line);) last = json::parse(line);
  in.close();
  ASSERT_TRUE(last["service"].contains("agent_state")) << last.dump();
  EXPECT_EQ(last["service"]["agent_state"]["agent"], "green-plan");
  EXPECT_EQ(last["service"]["agent_state"]["state"]["history"]["jobs"], 1.0);

  std::vector<std::string> warnings;
  ASSERT_TRUE(start("green", &warnings).ok());
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_EQ(warnings[0],
            "the journal's agent state is green-plan's, not green's: green starts afresh");

  last["service"]["agent_state"]["state"]["history"]["arrivals"] = json::array({json::array({1})});
  std::ofstream(journal, std::ios::trunc) << last.dump() << "\n";
  warnings.clear();
  ASSERT_TRUE(start("green-plan", &warnings).ok());
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_EQ(warnings[0],
            "the journal's agent state cannot be restored (plan history: arrivals: expected one "
            "array of counts per site (3 sites)): green-plan starts afresh");
}

// start_after_ms counts to the earliest start from the service's clock to the millisecond: a
// workload asked about 0.9 s into a second waits 1.1 s, not start_after_s's 2 s.
TEST(DispatchServer, StartAfterMillisecondsFromTheExactNow) {
  // 2026-01-01T00:00:02Z is 1767225602 s.
  nlohmann::json reply{{"earliest_start", "2026-01-01T00:00:02Z"}, {"start_after_s", 2}};
  with_start_after_ms(reply, 1767225600900);
  EXPECT_EQ(reply["start_after_ms"], 1100);
  nlohmann::json now{{"earliest_start", "2026-01-01T00:00:00Z"}, {"start_after_s", 0}};
  with_start_after_ms(now, 1767225600900);
  EXPECT_EQ(now["start_after_ms"], 0);
  nlohmann::json error{{"error", "bad request"}};
  with_start_after_ms(error, 1767225600900);
  EXPECT_FALSE(error.contains("start_after_ms"));
}

TEST(DispatchServer, ServesDecisionsClustersHealthAndMetrics) {
  auto service = DispatchService::create(two_clusters(), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  DispatchServer server(*service.value());
  auto port = server.start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.error();
  httplib::Client client("127.0.0.1", port.value());
  auto r = client.Post("/v1/dispatch", request(workload("w", 1, 1)).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["clusters"][0], "clean");
  auto bad = client.Post("/v1/dispatch", "[", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto clusters = client.Get("/v1/clusters");
  ASSERT_TRUE(clusters);
  EXPECT_EQ(json::parse(clusters->body)["clusters"].size(), 2u);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find(
                "greensched_dispatch_decisions_total{cluster=\"clean\",mode=\"carbon\"} 1"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("greensched_dispatch_requests_total{code=\"400\"} 1"),
            std::string::npos);
  server.stop();
}

// With TLS and a token: every route but /healthz needs the token (401 with {"error"} without
// it or with another), plain HTTP gets no answer, and a new token in the file is taken
// within a second.
TEST(DispatchServer, HttpsWithABearerToken) {
  testing::ScratchDir dir;
  testing::TlsFiles tls;
  ASSERT_TRUE(testing::make_tls_files(dir, tls));
  auto service = DispatchService::create(two_clusters(), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  serve::ListenerSecurity security;
  security.tls_cert = tls.server_cert;
  security.tls_key = tls.server_key;
  security.token_file = dir.write("token", "dispatch-token\n");
  DispatchServer server(*service.value(), security);
  auto port = server.start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.error();
  auto client = testing::https_client(port.value(), tls.ca_cert);

  auto none = client->Post("/v1/dispatch", request(workload("w", 1, 1)).dump(), "application/json");
  ASSERT_TRUE(none) << httplib::to_string(none.error());
  EXPECT_EQ(none->status, 401);
  EXPECT_NE(json::parse(none->body).value("error", "").find("missing bearer token"),
            std::string::npos)
      << none->body;
  auto wrong = client->Get("/v1/clusters", testing::bearer("dispatch-tokeN"));
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(json::parse(wrong->body).value("error", ""), "wrong bearer token");
  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 401);
  auto health = client->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;

  auto right = client->Post("/v1/dispatch", testing::bearer("dispatch-token"),
                            request(workload("w", 1, 1)).dump(), "application/json");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200) << right->body;
  EXPECT_EQ(json::parse(right->body)["clusters"][0], "clean");
  auto metrics_ok = client->Get("/metrics", testing::bearer("dispatch-token"));
  ASSERT_TRUE(metrics_ok);
  EXPECT_EQ(metrics_ok->status, 200);

  httplib::Client plain("127.0.0.1", port.value());
  plain.set_read_timeout(5, 0);
  EXPECT_FALSE(plain.Get("/healthz"));

  // Rotation: the file's new content is the token within a second; the old one is refused.
  dir.write("token.new", "rotated-token");
  std::filesystem::rename(dir.file("token.new"), security.token_file);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto rotated = client->Get("/v1/clusters", testing::bearer("rotated-token"));
  ASSERT_TRUE(rotated);
  EXPECT_EQ(rotated->status, 200) << rotated->body;
  auto old = client->Get("/v1/clusters", testing::bearer("dispatch-token"));
  ASSERT_TRUE(old);
  EXPECT_EQ(old->status, 401);
  server.stop();
}

// With --client-ca: a client without a certificate is refused (but for /healthz), one with a
// certificate the CA signed is served, one another CA signed fails the handshake.
TEST(DispatchServer, ClientCertificatesSignedByTheCa) {
  testing::ScratchDir dir;
  testing::TlsFiles tls;
  ASSERT_TRUE(testing::make_tls_files(dir, tls));
  auto service = DispatchService::create(two_clusters(), 0);
  ASSERT_TRUE(service.ok()) << service.error();
  serve::ListenerSecurity security;
  security.tls_cert = tls.server_cert;
  security.tls_key = tls.server_key;
  security.client_ca = tls.ca_cert;
  DispatchServer server(*service.value(), security);
  auto port = server.start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.error();

  auto without = testing::https_client(port.value(), tls.ca_cert);
  auto refused = without->Get("/v1/clusters");
  ASSERT_TRUE(refused) << httplib::to_string(refused.error());
  EXPECT_EQ(refused->status, 401);
  EXPECT_NE(json::parse(refused->body).value("error", "").find("client certificate"),
            std::string::npos);
  auto health = without->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);

  auto with = testing::https_client(port.value(), tls.ca_cert, tls.client_cert, tls.client_key);
  auto served = with->Get("/v1/clusters");
  ASSERT_TRUE(served) << httplib::to_string(served.error());
  EXPECT_EQ(served->status, 200) << served->body;

  auto stranger =
      testing::https_client(port.value(), tls.ca_cert, tls.stranger_cert, tls.stranger_key);
  EXPECT_FALSE(stranger->Get("/v1/clusters"));
  server.stop();
}

}  // namespace
}  // namespace greensched::dispatch
