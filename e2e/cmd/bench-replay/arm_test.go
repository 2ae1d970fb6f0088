package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAPodIsOfTheWaveOnceUngatedUntilBound(t *testing.T) {
	now := metav1.Now()
	gated := corev1.Pod{Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: "drake.dev/gang"}}}}
	ungated := corev1.Pod{}
	bound := corev1.Pod{Spec: corev1.PodSpec{NodeName: "n0"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	leaving := corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
	ended := corev1.Pod{Spec: corev1.PodSpec{NodeName: "n0"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	for _, c := range []struct {
		what                    string
		pod                     corev1.Pod
		deleted                 bool
		pending, bound, running bool
	}{
		{"gated (not admitted)", gated, false, false, false, false},
		{"ungated, no node yet", ungated, false, true, false, false},
		{"bound and Running", bound, false, false, true, true},
		{"being deleted", leaving, false, false, false, false},
		{"deleted", ungated, true, false, false, false},
		{"ended", ended, false, false, false, false},
	} {
		var v podView
		v.update(&c.pod, c.deleted)
		if v.pending != c.pending || v.bound != c.bound || v.running != c.running {
			t.Errorf("%s: pending %v bound %v running %v; want %v %v %v", c.what,
				v.pending, v.bound, v.running, c.pending, c.bound, c.running)
		}
	}
}
