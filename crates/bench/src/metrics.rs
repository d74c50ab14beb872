//! Writing results during a run: the samples as CSV in TLSNotary's layout
//! (its columns first, in their order, and ours after) or Primus', and the
//! refused runs beside them. The rows and their reading are
//! `webproof_bench_report::metrics`'s, so a chart never needs the runner.

use std::path::Path;
use webproof_bench_report::metrics::{refused_path, Refused, Sample};

/// Write the refused runs (header only when there are none, so a stale
/// file from an earlier run is never mistaken for this one's).
pub fn write_refused(output: &Path, refused: &[Refused]) -> anyhow::Result<()> {
    let path = refused_path(output);
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_path(&path)?;
    w.write_record([
        "group",
        "name",
        "mode",
        "topology",
        "sample",
        "verdict",
        "reason",
        "prover_exit_code",
        "time_total",
    ])?;
    for r in refused {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Output layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// TLSNotary's columns, then webproof's.
    Tlsn,
    /// Primus' framework layout.
    Primus,
}

/// Write samples (replacing the file).
pub fn write_csv(path: &Path, samples: &[Sample], format: Format) -> anyhow::Result<()> {
    let tmp = path.with_extension("csv.tmp");
    {
        let mut w = csv::Writer::from_path(&tmp)?;
        match format {
            Format::Tlsn => {
                for s in samples {
                    w.serialize(s)?;
                }
                if samples.is_empty() {
                    w.serialize(Sample::default())?;
                }
            }
            Format::Primus => {
                w.write_record([
                    "kind",
                    "name",
                    "bandwidth(Mbps)",
                    "latency(ms)",
                    "request_size(B)",
                    "response_size(B)",
                    "send_bytes(B)",
                    "recv_bytes(B)",
                    "cost(ms)",
                    "memory(KB)",
                ])?;
                for s in samples {
                    w.write_record([
                        s.mode.clone(),
                        format!("{}/{}", s.group, s.name),
                        fmt_num(s.bandwidth),
                        fmt_num(s.latency),
                        s.upload_size.to_string(),
                        s.download_size.to_string(),
                        s.uploaded_total.to_string(),
                        s.downloaded_total.to_string(),
                        fmt_num(s.time_total),
                        (s.heap_max_bytes / 1024).to_string(),
                    ])?;
                }
            }
        }
        w.flush()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webproof_bench_report::metrics::{read_csv, read_refused};

    #[test]
    fn tlsn_columns_come_first_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        write_csv(&p, &[Sample::default()], Format::Tlsn).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let header = text.lines().next().unwrap();
        assert!(header.starts_with(
            "group,name,latency,bandwidth,upload_size,download_size,defer_decryption,proxy,\
             time_preprocess,time_online,time_total,uploaded_preprocess,downloaded_preprocess,\
             uploaded_online,downloaded_online,uploaded_total,downloaded_total,heap_max_bytes,mode"
        ));
    }

    #[test]
    fn round_trip_and_tlsnotary_files_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        let s = Sample {
            group: "g".into(),
            name: "n".into(),
            time_total: 12.5,
            heap_max_bytes: 1 << 20,
            mode: "plain".into(),
            topology: "plain".into(),
            verdict: "none".into(),
            target: "native".into(),
            ..Default::default()
        };
        write_csv(&p, std::slice::from_ref(&s), Format::Tlsn).unwrap();
        assert_eq!(read_csv(&p).unwrap(), vec![s]);

        // TLSNotary's own file: no extra columns, heap_max_bytes empty.
        let t = dir.path().join("t.csv");
        std::fs::write(
            &t,
            "group,name,latency,bandwidth,upload_size,download_size,defer_decryption,proxy,time_preprocess,time_online,time_total,uploaded_preprocess,downloaded_preprocess,uploaded_online,downloaded_online,uploaded_total,downloaded_total,heap_max_bytes\n\
             cable,cable,20,20,1024,2048,true,true,0,1500,1600,0,0,700000,9000,700000,9000,\n",
        )
        .unwrap();
        let r = read_csv(&t).unwrap();
        assert_eq!(r[0].mode, "proxy");
        assert_eq!(r[0].topology, "proxy");
        assert_eq!(r[0].heap_max_bytes, 0);
        assert_eq!(r[0].time_total, 1600.0);
        assert_eq!(r[0].target, "native");
    }

    #[test]
    fn refused_runs_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        assert!(read_refused(&p).unwrap().is_empty());
        let r = Refused {
            group: "g".into(),
            verdict: "rejected".into(),
            reason: "bad, \"quoted\" proof".into(),
            ..Default::default()
        };
        write_refused(&p, std::slice::from_ref(&r)).unwrap();
        assert_eq!(refused_path(&p), dir.path().join("m.refused.csv"));
        assert_eq!(read_refused(&p).unwrap(), vec![r]);
        write_refused(&p, &[]).unwrap();
        assert!(read_refused(&p).unwrap().is_empty());
    }

    #[test]
    fn primus_layout() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.csv");
        let s = Sample {
            mode: "proxy".into(),
            group: "g".into(),
            name: "n".into(),
            heap_max_bytes: 2048,
            ..Default::default()
        };
        write_csv(&p, &[s], Format::Primus).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "kind,name,bandwidth(Mbps),latency(ms),request_size(B),response_size(B),send_bytes(B),recv_bytes(B),cost(ms),memory(KB)"
        );
        assert_eq!(lines.next().unwrap(), "proxy,g/n,0,0,0,0,0,0,0,2");
    }
}
