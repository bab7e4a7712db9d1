// What one site energy controller made of a fleet run's demand: per site and hour the
// controller's flows with the generation, prices and carbon they were settled at, and the
// fleet's totals as summary.csv reports them.
#pragma once

#include <string>
#include <vector>

#include "greensched/energy/controller.hpp"

namespace greensched::multi {

struct SiteEnergyHours {
  std::vector<double> demand_kwh;  // facility energy (the run's site_hourly_kwh)
  std::vector<double> pv_kwh;
  std::vector<double> wind_kwh;
  std::vector<double> price_usd_per_kwh;  // grid import; 0 where the site has no price series
  std::vector<double> carbon_g_per_kwh;
  energy::ControllerRun run;
};

struct EnergyResult {
  std::string controller;
  double cost_usd = 0;   // import x price - export x feed-in, all sites
  double carbon_kg = 0;  // the run's carbon, with on-site sites' grid import instead
  double grid_import_kwh = 0;
  double export_kwh = 0;
  double curtailed_kwh = 0;
  double generation_kwh = 0;        // on-site
  double onsite_kwh_used = 0;       // generation used on site (directly or through the battery)
  double self_consumption_pct = 0;  // onsite_kwh_used / generation_kwh
  double battery_cycles = 0;        // full-cycle equivalents: drawn / usable, over all batteries
  std::vector<SiteEnergyHours> sites;
};

}  // namespace greensched::multi
