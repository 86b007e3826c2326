package app

import "testing"

// get hands out copies, peek the cache's own record; neither lets a
// caller's change reach the cache, and forget drops what peek shared.
func TestRecordCacheGetAndPeek(t *testing.T) {
	type rec struct{ Name string }
	var rc recordCache[string, rec]
	loads := 0
	load := func() (*rec, error) {
		loads++
		return &rec{Name: "web"}, nil
	}
	first, err := rc.get("k", load)
	if err != nil {
		t.Fatal(err)
	}
	first.Name = "changed by the caller of a miss"
	second, _ := rc.get("k", load)
	if second.Name != "web" || loads != 1 {
		t.Fatalf("second get: %+v after %d loads", second, loads)
	}
	second.Name = "changed by the caller of a hit"
	p1, _ := rc.peek("k", load)
	p2, _ := rc.peek("k", load)
	if p1 != p2 || p1.Name != "web" || loads != 1 {
		t.Fatalf("peek: %p %p %+v after %d loads", p1, p2, p1, loads)
	}
	if third, _ := rc.get("k", load); third == p1 {
		t.Fatal("get handed out the shared record")
	}
	rc.forget("k")
	p3, _ := rc.peek("k", load)
	if p3 == p1 || loads != 2 {
		t.Fatalf("peek after forget: same record %v, %d loads", p3 == p1, loads)
	}
}
