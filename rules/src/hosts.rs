//! Emulated hosts: `cargo uat run --hosts H -n N` on one machine runs the N
//! ranks as H hosts — shared memory inside a host, the network between —
//! through GASNet's supernodes. GASNet groups a machine's ranks into
//! supernodes of consecutive ranks, at most `GASNET_SUPERNODE_MAXSIZE`
//! each, so the hosts hold ⌈N/H⌉ ranks and the last one the rest (5 ranks
//! on 2 hosts: 3 + 2). Where that does not make H hosts (6 ranks on 4:
//! 2 + 2 + 2), the launcher refuses and names the host counts that work.

/// The variable the launcher sets to the number of hosts it asked GASNet
/// for; the runtime checks at start that GASNet made that many (a GASNet
/// without shared memory between ranks would make one host per rank).
pub const LAUNCHED_HOSTS_ENV: &str = "UAT_LAUNCHED_HOSTS";

/// GASNet's variable that bounds a supernode's ranks.
pub const SUPERNODE_MAXSIZE_ENV: &str = "GASNET_SUPERNODE_MAXSIZE";

/// The most ranks GASNet-EX 2021.3.0 shares memory between by default
/// (`GASNETI_PSHM_MAX_NODES`, configure's `--with-pshm-max-nodes`): a
/// larger `GASNET_SUPERNODE_MAXSIZE` is a fatal error inside GASNet.
pub const PSHM_MAX_RANKS: u32 = 255;

/// The ranks per host (`GASNET_SUPERNODE_MAXSIZE`) that make `ranks` ranks
/// into `hosts` hosts, or why none does.
pub fn ranks_per_host(ranks: u32, hosts: u32) -> Result<u32, String> {
    if hosts == 0 || hosts > ranks {
        return Err(format!(
            "--hosts {hosts}: expected 1 to {ranks} hosts (at least one rank each)"
        ));
    }
    let size = ranks.div_ceil(hosts);
    if size > PSHM_MAX_RANKS {
        return Err(format!(
            "--hosts {hosts} -n {ranks}: {size} ranks a host; GASNet shares memory between at most \
             {PSHM_MAX_RANKS} (GASNETI_PSHM_MAX_NODES): use more hosts"
        ));
    }
    if ranks.div_ceil(size) == hosts {
        return Ok(size);
    }
    let mut valid: Vec<String> = (1..=ranks)
        .filter(|&h| ranks.div_ceil(ranks.div_ceil(h)) == h && ranks.div_ceil(h) <= PSHM_MAX_RANKS)
        .map(|h| h.to_string())
        .take(13)
        .collect();
    if valid.len() == 13 {
        valid[12] = "...".into();
    }
    Err(format!(
        "--hosts {hosts} -n {ranks}: GASNet makes hosts of consecutive ranks, ⌈{ranks}/{hosts}⌉ = {size} each, \
         which gives {} hosts, not {hosts}; with {ranks} ranks choose --hosts from {}",
        ranks.div_ceil(size),
        valid.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_and_uneven_splits_and_the_refusals() {
        assert_eq!(ranks_per_host(4, 2), Ok(2));
        assert_eq!(ranks_per_host(6, 2), Ok(3));
        assert_eq!(ranks_per_host(5, 2), Ok(3));
        assert_eq!(ranks_per_host(4, 4), Ok(1));
        assert_eq!(ranks_per_host(4, 1), Ok(4));
        let e = ranks_per_host(6, 4).unwrap_err();
        assert!(e.contains("gives 3 hosts") && e.contains("1, 2, 3, 6"), "{e}");
        assert!(ranks_per_host(2, 3).is_err());
        assert!(ranks_per_host(300, 1).unwrap_err().contains("at most 255"));
        assert_eq!(ranks_per_host(300, 2), Ok(150));
        assert!(ranks_per_host(2, 0).is_err());
    }
}
