package gangbench

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// Pct: the p-quantile of v (nearest rank), NaN when empty.
func Pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

// Median of the non-NaN values of v, NaN when none.
func Median(v []float64) float64 {
	var s []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// CSVFile creates path; the returned close flushes and reports a write
// error.
func CSVFile(path string) (*csv.Writer, func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	w := csv.NewWriter(f)
	return w, func() error {
		w.Flush()
		if err := w.Error(); err != nil {
			f.Close()
			return fmt.Errorf("csv %s: %v", path, err)
		}
		return f.Close()
	}, nil
}

// Panel is one plot of PlotBusyHeld: the series rows whose first column is
// Run and second Arm.
type Panel struct {
	Arm   string
	Run   uint64
	Title string
}

// PlotBusyHeld draws, from a series CSV (run, arm, t_s, gpus_busy,
// gpus_held_by_partial, ...), one panel per entry of panels in a grid of
// rows x cols: GPUs busy in whole gangs and GPUs held by partial gangs over
// time, the cluster's gpus as the top. It needs gnuplot.
func PlotBusyHeld(series, png string, rows, cols, gpus int, panels []Panel) error {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		return fmt.Errorf("gnuplot not installed (hack/install-deps.sh installs gnuplot-nox)")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "set terminal png size %d,%d\nset output %q\nset datafile separator \",\"\n", 420*cols+80, 260*rows+80, png)
	fmt.Fprintf(&sb, "set multiplot layout %d,%d title \"GPUs busy / held by partial gangs (%d GPUs)\"\n", rows, cols, gpus)
	fmt.Fprintf(&sb, "set yrange [0:%d]\nset xrange [0:*]\nset grid\nset key top right font \",8\"\nset xlabel \"s\"\n", gpus+10)
	for _, p := range panels {
		fmt.Fprintf(&sb, "set title \"%s\"\n", p.Title)
		sel := fmt.Sprintf(`(strcol(2) eq "%s" && $1 == %d ? $3 : 1/0)`, p.Arm, p.Run)
		fmt.Fprintf(&sb, "plot %q using %s:4 with filledcurves x1 lc rgb \"#4a90d9\" title \"busy\", \\\n", series, sel)
		fmt.Fprintf(&sb, "     %q using %s:5 with lines lw 2 lc rgb \"#d0021b\" title \"held by partial\"\n", series, sel)
	}
	sb.WriteString("unset multiplot\n")
	cmd := exec.Command("gnuplot")
	cmd.Stdin = strings.NewReader(sb.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gnuplot: %v: %s", err, out)
	}
	return nil
}
