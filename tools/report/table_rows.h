// The columns of the allreduce table. Narrow (the default) fits 120
// characters, --net emulate's link columns included: a configuration's size,
// type and densities go in a line above its rows. Wide (--wide) puts every
// column in every row. Both read ratios one way: above 1, the first
// algorithm of the run (omni by default) is the faster.
#pragma once

#include <cstdio>
#include <string>

#include "tools/record/result_record.h"

namespace omnib {

struct TableLayout {
  bool wide = false;
  bool link = false;  // --net emulate: link bytes and the share of the link limit
};

// The legend lines (each column named once) and the two header lines.
void print_table_legend(std::FILE* out, const TableLayout& layout);
void print_table_header(std::FILE* out, const TableLayout& layout);

// Narrow only: "# 4M float: 1048576 elements, density 0.1045, ...".
void print_configuration_line(std::FILE* out, const TableLayout& layout, const ResultRecord& r);

// One row. `first`: the group's first algorithm that ran (null: none).
void print_table_row(std::FILE* out, const TableLayout& layout, const ResultRecord& r, const ResultRecord* first);
void print_skipped_row(std::FILE* out, const TableLayout& layout, const ResultRecord& r);

// "2.33x": a ratio as every table prints it.
std::string format_ratio(double x);

// `text` after `prefix`, broken at spaces so that no line passes 120
// characters; continuation lines start with "#   " and two more spaces.
void print_wrapped(std::FILE* out, const std::string& prefix, const std::string& text);

}  // namespace omnib
