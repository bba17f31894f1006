package seed

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// picture is one generated image, encoded and ready to write.
type picture struct {
	Data          []byte
	Width, Height int
	MimeType      string
}

// sizes are the shapes social networks and article pages use: landscape, square, portrait.
var sizes = [][2]int{{480, 270}, {400, 400}, {320, 400}, {600, 315}}

// makePicture draws a small abstract "photo": a two-colour gradient with a few soft discs and a
// horizon band. The colours come from a generator seeded by key, so the same seed makes the
// same files, and every image looks different from its neighbours in the dashboard. It writes
// pixels directly with integer blending: the demo makes hundreds of these on every fresh
// database, including in other packages' tests.
func makePicture(key string, n int, asJPEG bool) (picture, error) {
	h := fnv.New64a()
	h.Write([]byte(key))
	r := rand.New(rand.NewPCG(h.Sum64(), uint64(n)))
	size := sizes[n%len(sizes)]
	w, ht := size[0], size[1]

	from, to, band := randomColour(r), randomColour(r), randomColour(r)
	img := image.NewRGBA(image.Rect(0, 0, w, ht))
	horizon := ht/2 + r.IntN(ht/4)
	for y := range ht {
		for x := range w {
			c := mix(from, to, (x+y)*256/(w+ht))
			if y >= horizon {
				c = mix(c, band, 115)
			}
			put(img, x, y, c)
		}
	}
	for range 2 + r.IntN(4) {
		cx, cy, rad := r.IntN(w), r.IntN(ht), 12+r.IntN(ht/3)
		c := randomColour(r)
		for y := max(0, cy-rad); y < min(ht, cy+rad); y++ {
			for x := max(0, cx-rad); x < min(w, cx+rad); x++ {
				if dx, dy := x-cx, y-cy; dx*dx+dy*dy <= rad*rad {
					put(img, x, y, mix(img.RGBAAt(x, y), c, 154))
				}
			}
		}
	}

	var buf bytes.Buffer
	p := picture{Width: w, Height: ht}
	if asJPEG {
		p.MimeType = "image/jpeg"
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 82}); err != nil {
			return picture{}, fmt.Errorf("seed: encode jpeg: %w", err)
		}
	} else {
		p.MimeType = "image/png"
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, img); err != nil {
			return picture{}, fmt.Errorf("seed: encode png: %w", err)
		}
	}
	p.Data = buf.Bytes()
	return p, nil
}

func randomColour(r *rand.Rand) color.RGBA {
	return color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
}

// mix blends b over a by t/256.
func mix(a, b color.RGBA, t int) color.RGBA {
	f := func(x, y uint8) uint8 { return uint8((int(x)*(256-t) + int(y)*t) >> 8) }
	return color.RGBA{f(a.R, b.R), f(a.G, b.G), f(a.B, b.B), 255}
}

func put(img *image.RGBA, x, y int, c color.RGBA) {
	i := img.PixOffset(x, y)
	img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
}

// writeObject stores data where the storage surface serves bucket objects from. The path
// comes from the seed itself, never from input, but it is still kept inside dir.
func writeObject(dir, storagePath string, data []byte) error {
	local := filepath.FromSlash(storagePath)
	if !filepath.IsLocal(local) {
		return fmt.Errorf("seed: storage path %q escapes the media folder", storagePath)
	}
	full := filepath.Join(dir, local)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("seed: media folder: %w", err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		return fmt.Errorf("seed: write %s: %w", storagePath, err)
	}
	return nil
}
