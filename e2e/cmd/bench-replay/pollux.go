package main

// A Pollux workload's jobs on the cluster advance by their applications'
// measured step times: sim/pollux_apps.c reads the measurements and
// sim/pollux_model.c's sim_papp_job_rate turns a job's workers and their
// nodes into work per second, the same C the simulator runs (compiled in
// by cgo from the sim_*.c and common_err.c files here), not a copy.

// #cgo CFLAGS: -I${SRCDIR}/../../.. -std=c11 -D_POSIX_C_SOURCE=200809L
// #cgo LDFLAGS: -lm
// #include <stdlib.h>
// #include "sim/pollux_apps.h"
// #include "sim/pollux_model.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// polluxApps: the measurements of the applications a window names.
type polluxApps struct {
	c     C.struct_sim_papps
	index map[string]int
}

// loadApps reads dir/<name>/ for each application named.
func loadApps(dir string, names []string) (*polluxApps, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no application to load")
	}
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	arr := (*[1 << 20]*C.char)(C.malloc(C.size_t(len(names)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))[:len(names):len(names)]
	defer C.free(unsafe.Pointer(&arr[0]))
	for i, n := range names {
		arr[i] = C.CString(n)
	}
	defer func() {
		for _, p := range arr {
			C.free(unsafe.Pointer(p))
		}
	}()
	p := &polluxApps{index: map[string]int{}}
	var msg [512]C.char
	if err := C.sim_papps_load(cdir, &arr[0], C.size_t(len(names)), &p.c, &msg[0], C.size_t(len(msg))); err != 0 {
		return nil, fmt.Errorf("%s", C.GoString(&msg[0]))
	}
	for _, n := range names {
		cn := C.CString(n)
		p.index[n] = int(C.sim_papps_find(&p.c, cn))
		C.free(unsafe.Pointer(cn))
	}
	return p, nil
}

func (p *polluxApps) release() { C.sim_papps_release(&p.c) }

// rate: work per second of a job of app at batch whose work is samples
// (the artifact's count at its tuned size), its workers on workerNodes by
// worker index (only equality of names matters), by sim_papp_job_rate.
func (p *polluxApps) rate(app string, batch int, samples float64, workerNodes []string) (float64, error) {
	k, ok := p.index[app]
	if !ok || k < 0 {
		return 0, fmt.Errorf("application %q not loaded", app)
	}
	if len(workerNodes) == 0 {
		return 0, nil
	}
	ids := map[string]int{}
	node := make([]C.int, len(workerNodes))
	for i, n := range workerNodes {
		if _, seen := ids[n]; !seen {
			ids[n] = len(ids)
		}
		node[i] = C.int(ids[n])
	}
	a := (*[1 << 16]C.struct_sim_papp)(unsafe.Pointer(p.c.app))[k : k+1 : k+1]
	var r C.double
	if err := C.sim_papp_job_rate(&a[0], C.int(batch), C.double(samples), &node[0], C.int(len(node)), false, &r); err != 0 {
		return 0, fmt.Errorf("sim_papp_job_rate: error %d", int(err))
	}
	return float64(r), nil
}
