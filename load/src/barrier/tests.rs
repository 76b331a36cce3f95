use super::*;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn segment(index: u64, count: u64) -> Segment {
    Segment { index, count }
}

/// Issue 18, item 2: three segments meet; every one gets the same start, half a second after
/// the last came, whichever came first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_segment_starts_at_the_one_announced_instant() {
    let at = format!("127.0.0.1:{}", free_port());
    let timeout = Duration::from_secs(5);
    // A guest may come before segment 0 serves: it tries again.
    let early = {
        let at = at.clone();
        tokio::spawn(async move {
            let guest = Barrier::new(&at, segment(2, 3), timeout)
                .await
                .expect("a guest");
            guest.meet("load/0/1", Stage::Start).await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let host = Barrier::new(&at, segment(0, 3), timeout)
        .await
        .expect("the host");
    let late = {
        let at = at.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let guest = Barrier::new(&at, segment(1, 3), timeout)
                .await
                .expect("a guest");
            guest.meet("load/0/1", Stage::Start).await
        })
    };
    let asked = Instant::now();
    let own = host
        .meet("load/0/1", Stage::Start)
        .await
        .expect("met")
        .expect("a start");
    let first = early.await.expect("ran").expect("met").expect("a start");
    let last = late.await.expect("ran").expect("met").expect("a start");
    for other in [first, last] {
        assert_eq!(other.unix_ms, own.unix_ms);
        let (other, own) = (other.at, own.at);
        let apart = if other > own {
            other - own
        } else {
            own - other
        };
        assert!(apart < Duration::from_millis(5), "{apart:?} apart");
    }
    // The last came 300 ms in; the start is 500 ms after that.
    let lead = own.at - asked;
    assert!(
        lead >= Duration::from_millis(750) && lead < Duration::from_millis(1500),
        "{lead:?}"
    );
    // After the load they meet again, with no start to announce.
    let done = host.meet("load/0/1", Stage::Done);
    let guests = async {
        for index in [1, 2] {
            let guest = Barrier::new(&at, segment(index, 3), timeout)
                .await
                .expect("a guest");
            tokio::spawn(async move { guest.meet("load/0/1", Stage::Done).await });
        }
    };
    let (done, ()) = tokio::join!(done, guests);
    assert_eq!(done, Ok(None));
}

/// A segment that never comes fails the meeting for everyone, by its index, after the
/// timeout; a segment with no segment 0 to ask says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_segment_that_never_comes_is_named() {
    let at = format!("127.0.0.1:{}", free_port());
    let timeout = Duration::from_millis(400);
    let host = Barrier::new(&at, segment(0, 3), timeout)
        .await
        .expect("the host");
    let guest = Barrier::new(&at, segment(1, 3), timeout)
        .await
        .expect("a guest");
    let (own, other) = tokio::join!(
        host.meet("load/0/1", Stage::Start),
        guest.meet("load/0/1", Stage::Start)
    );
    let own = own.expect_err("missed");
    assert_eq!(own.segments, [2]);
    assert!(
        own.message
            .starts_with("segment 2/3 never reached the barrier at `load/0/1/start`"),
        "{}",
        own.message
    );
    assert_eq!(other.expect_err("missed").message, own.message);

    let nobody = format!("127.0.0.1:{}", free_port());
    let alone = Barrier::new(&nobody, segment(1, 2), timeout)
        .await
        .expect("a guest");
    let missed = alone
        .meet("load/0/1", Stage::Start)
        .await
        .expect_err("no host");
    assert!(
        missed.message.contains("segment 0's barrier at 127.0.0.1:"),
        "{}",
        missed.message
    );
    // Segments of another count are refused by segment 0.
    let stranger = Barrier::new(&at, segment(3, 4), timeout)
        .await
        .expect("a guest");
    let refused = stranger
        .meet("load/0/2", Stage::Start)
        .await
        .expect_err("refused");
    assert!(
        refused.message.contains("a run of 3 segments"),
        "{}",
        refused.message
    );
}
