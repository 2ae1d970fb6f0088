package gangbench

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DeleteNamespace deletes ns and waits until it is gone (its pods with it:
// kwok removes a deleted pod at once), so the next arm starts on an empty
// cluster.
func DeleteNamespace(cs kubernetes.Interface, ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bg := metav1.DeletePropagationBackground
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %v", ns, err)
	}
	for {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("namespace %s still there after 5 minutes", ns)
		}
		time.Sleep(500 * time.Millisecond) // polling the namespace's deletion
	}
}
