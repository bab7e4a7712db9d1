#!/usr/bin/env python3
"""Writes data/holidays.csv: the public holidays of every zone of the public data, the calendar
feature of the learned forecasts (docs/FORECAST.md). The table is compiled into greensched.

  python3 -m pip install holidays==0.109
  scripts/holiday-table.py [--years 2020-2030] [--out data/holidays.csv]

Each zone takes its country's public holidays (the `holidays` package, python-holidays), and
its state's or province's where a zone is one (AU-NSW, AU-VIC, BR-SP, CA-ON) or where the
country's holidays differ by nation (GB: England's). A US zone takes the federal holidays: a
grid's region spans several states. One row per zone and local date; a date with two names
keeps them joined by "; ".
"""
import argparse
import csv
import sys

import holidays

# zone (as the data folder names it): (country, subdivision or None)
ZONES = {
    "AT": ("AT", None),
    "AU-NSW": ("AU", "NSW"),
    "AU-VIC": ("AU", "VIC"),
    "BE": ("BE", None),
    "BR-SP": ("BR", "SP"),
    "CA-ON": ("CA", "ON"),
    "CH": ("CH", None),
    "CL-SIC": ("CL", None),
    "DE-LU": ("DE", None),
    "ES": ("ES", None),
    "FR": ("FR", None),
    "GB": ("GB", "ENG"),
    "IN-WE": ("IN", None),
    "JP-TK": ("JP", None),
    "KR": ("KR", None),
    "NL": ("NL", None),
    "PT": ("PT", None),
    "SG": ("SG", None),
    "US-CAL-CISO": ("US", None),
    "US-MIDA-PJM": ("US", None),
    "US-NY-NYIS": ("US", None),
    "US-TEX-ERCO": ("US", None),
    "ZA": ("ZA", None),
}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--years", default="2020-2030", help="first-last year (default 2020-2030)")
    p.add_argument("--out", default="data/holidays.csv")
    a = p.parse_args()
    try:
        first, last = (int(y) for y in a.years.split("-"))
    except ValueError:
        sys.exit(f"--years {a.years}: expected FIRST-LAST, e.g. 2020-2030")
    years = range(first, last + 1)
    rows = []
    for zone, (country, subdiv) in sorted(ZONES.items()):
        days = holidays.country_holidays(country, subdiv=subdiv, years=years)
        for day in sorted(days):
            rows.append((zone, day.isoformat(), "; ".join(days.get_list(day))))
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["zone", "date", "name"])
        w.writerows(rows)
    print(f"{a.out}: {len(rows)} holidays of {len(ZONES)} zones, {first}-{last}")


if __name__ == "__main__":
    main()
