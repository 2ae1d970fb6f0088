package gangbench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// WatchPods follows the pods of namespace ns on an informer until ctx ends,
// calling on for each add, update and delete (a delete seen only on a
// relist included), and returns once the informer has synced.
func WatchPods(ctx context.Context, cs kubernetes.Interface, ns string, on func(p *corev1.Pod, deleted bool)) error {
	call := func(obj any, deleted bool) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok {
			on(p, deleted)
		}
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { call(obj, false) },
		UpdateFunc: func(_, obj any) { call(obj, false) },
		DeleteFunc: func(obj any) { call(obj, true) },
	}); err != nil {
		return fmt.Errorf("pod informer: %v", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("pod informer did not sync")
	}
	return nil
}
