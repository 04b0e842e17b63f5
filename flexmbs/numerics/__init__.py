"""Linear algebra the kernels call: 3-vectors, 3 x 3 matrices and a Cholesky solve in
place (`linalg`), and the band solver of a matrix bordered by dense rows and columns
(`bordered_band`)."""
