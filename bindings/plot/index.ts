// SVG plots as text, for Node and browsers alike (no DOM): marginals, traces, log Z against time, bench bars.
export { plotMarginalHeatmap, plotMarginals, plotResult, type MarginalsInput, type HeatmapOptions, type MarginalBarsOptions } from './marginals.ts';
export { plotTrace, type TraceOptions } from './trace.ts';
export { plotLogZ, type LogZPoint, type LogZSeries, type LogZPlotOptions } from './logz.ts';
export { plotBars, type BarGroup, type BarPlotOptions, type Measurement } from './bars.ts';
export { plotLines, type LineSeries, type LinePlotOptions } from './lines.ts';
export { PALETTE, type PlotOptions } from './svg.ts';
