import { ApiProperty } from '@nestjs/swagger';
import {
  IsEmail,
  IsString,
  MaxLength,
  MinLength,
  Validate,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';

/** bcrypt reads at most 72 bytes; a longer password would be silently truncated. */
@ValidatorConstraint({ name: 'maxBytes72' })
export class MaxBcryptBytes implements ValidatorConstraintInterface {
  validate(value: unknown) {
    return typeof value === 'string' && Buffer.byteLength(value, 'utf8') <= 72;
  }
  defaultMessage() {
    return 'password must be at most 72 bytes';
  }
}

export class SignupDto {
  @ApiProperty({ maxLength: 100 })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  organization_name: string;

  @ApiProperty({ format: 'email' })
  @IsEmail()
  @MaxLength(254)
  email: string;

  @ApiProperty({ minLength: 12, description: 'At least 12 characters, at most 72 bytes.' })
  @IsString()
  @MinLength(12)
  @Validate(MaxBcryptBytes)
  password: string;
}

export class LoginDto {
  @ApiProperty({ format: 'email' })
  @IsString()
  @MaxLength(254)
  email: string;

  @ApiProperty()
  @IsString()
  @MaxLength(1024)
  password: string;
}
