// A gzip or ZIP being written with fflate, fed bytes and answering with the bytes each step made:
// the export's compression, run by deflate-worker.ts off the request thread (or here, should no
// worker start). Pure but for fflate; the same bytes wherever it runs.
import { Gzip, Zip, ZipDeflate } from 'fflate'

const LEVEL = 6

/** A step of a stream: bytes to add (`final`: the gzip's or the ZIP entry's last), a ZIP entry to begin, the ZIP's end. */
export type DeflateStep = { op: 'data'; data: Uint8Array; final: boolean } | { op: 'entry'; name: string } | { op: 'end' }

export class DeflateStream {
  private out: Uint8Array[] = []
  private failure: Error | null = null
  private readonly gz?: Gzip
  private readonly zip?: Zip
  private file?: ZipDeflate

  constructor(kind: 'gzip' | 'zip') {
    if (kind === 'gzip') this.gz = new Gzip({ level: LEVEL }, (chunk) => void this.out.push(chunk))
    else
      this.zip = new Zip((err, chunk) => {
        if (err) this.failure = err
        else this.out.push(chunk)
      })
  }

  /** The bytes `step` made (none, often: the compressor keeps a window). */
  step(s: DeflateStep): Uint8Array[] {
    if (s.op === 'entry') this.zip!.add((this.file = new ZipDeflate(s.name, { level: LEVEL })))
    else if (s.op === 'end') this.zip!.end()
    else (this.gz ?? this.file!).push(s.data, s.final)
    if (this.failure) throw this.failure
    const made = this.out
    this.out = []
    return made
  }
}
