package main

// #cgo CFLAGS: -I${SRCDIR}/../../.. -std=c11
// #include "gang/speed.h"
import "C"

// speedModel is gang/speed.h's struct drake_speed, its parameters read from
// `drake sim --print-jobs` (drake's flag defaults, or the flags given).
type speedModel struct {
	ScalingLoss     float64 `json:"scaling_loss"`
	LocalityPenalty float64 `json:"locality_penalty"`
	RescalePause    float64 `json:"rescale_pause_s"`
	NodeGPUs        int     `json:"node_gpus"`
}

// rate: T(w, n) of a job with w workers of gpw GPUs over n nodes (PS
// included), computed by drake_speed_rate.
func (m speedModel) rate(w, gpw, nodes int) float64 {
	c := C.struct_drake_speed{
		scaling_loss:     C.double(m.ScalingLoss),
		locality_penalty: C.double(m.LocalityPenalty),
		rescale_pause:    C.double(m.RescalePause),
		node_gpus:        C.int(m.NodeGPUs),
	}
	return float64(C.drake_speed_rate(&c, C.int(w), C.int(gpw), C.int(nodes)))
}
